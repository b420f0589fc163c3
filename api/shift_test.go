package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/pools"
)

type shiftResult struct{ Result pools.Shift }

func TestShiftStartListEnd(t *testing.T) {
	t.Parallel()
	e := previewEnv(t, nil)
	f := e.fixture()
	second := e.create(pools.KindPool, poolBody(f.monitor))["id"].(string)
	e.setDefaultPools(f.lb, f.pool, second)
	before := time.Now().Truncate(time.Microsecond)
	r := e.do("POST", "/api/v1/shifts", map[string]any{"target": map[string]any{"pool": f.pool},
		"load_balancers": []string{f.lb}, "reason": "bad deploy", "duration": "2h"})
	if r.status != http.StatusCreated {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	var got shiftResult
	r.json(t, &got)
	sh := got.Result
	if sh.Status != pools.ShiftActive || sh.StartsAt.Before(before) || !sh.ExpiresAt.Equal(sh.StartsAt.Add(2*time.Hour)) ||
		r.header.Get("Location") != "/api/v1/shifts/"+sh.ID || sh.Reason != "bad deploy" {
		t.Fatalf("started %+v, Location %q", sh, r.header.Get("Location"))
	}
	// A scheduled one beside it, ending by expires_at.
	at := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	r = e.do("POST", "/api/v1/shifts", map[string]any{"target": map[string]any{"origin": second + "/c"},
		"reason": "maintenance", "starts_at": at, "expires_at": at.Add(time.Hour)})
	if r.status != http.StatusCreated {
		t.Fatalf("schedule: %d %s", r.status, r.body)
	}
	var list listPage[pools.Shift]
	e.do("GET", "/api/v1/shifts?status=scheduled", nil).json(t, &list)
	if len(list.Result) != 1 || list.Result[0].Target.Origin != second+"/c" || list.ResultInfo.TotalCount != 1 {
		t.Fatalf("scheduled: %+v", list)
	}
	e.do("GET", "/api/v1/shifts", nil).json(t, &list)
	if len(list.Result) != 2 {
		t.Fatalf("all: %+v", list)
	}
	if p := e.do("GET", "/api/v1/shifts?status=over", nil).problem(t, http.StatusBadRequest); !strings.Contains(p.Errors[0].Message, "scheduled, active, ended, expired") {
		t.Errorf("unknown status: %+v", p)
	}
	r = e.do("DELETE", "/api/v1/shifts/"+sh.ID, nil)
	r.json(t, &got)
	if r.status != http.StatusOK || got.Result.Status != pools.ShiftEnded || got.Result.EndedAt == nil {
		t.Fatalf("end: %d %s", r.status, r.body)
	}
	e.do("DELETE", "/api/v1/shifts/"+sh.ID, nil).problem(t, http.StatusBadRequest)
	e.do("DELETE", "/api/v1/shifts/nope", nil).problem(t, http.StatusNotFound)
	e.do("GET", "/api/v1/shifts/"+sh.ID, nil).json(t, &got)
	if got.Result.Status != pools.ShiftEnded {
		t.Fatalf("get after end: %+v", got.Result)
	}
}

func TestShiftValidation(t *testing.T) {
	t.Parallel()
	e := previewEnv(t, nil)
	f := e.fixture()
	p := e.do("POST", "/api/v1/shifts", map[string]any{"target": map[string]any{"pool": "nope", "zone": "z"},
		"load_balancers": []string{"gone"}, "duration": "9d"}).problem(t, http.StatusBadRequest)
	paths := fieldPaths(p)
	for _, want := range []string{"target", "reason", "expires_at"} {
		if !paths[want] {
			t.Errorf("no error for %s: %+v", want, p.Errors)
		}
	}
	for body, field := range map[string]string{
		`{"target": {"pool": "nope"}, "reason": "r", "duration": "1h"}`:                               "target.pool",
		`{"target": {"origin": "` + f.pool + `/zz"}, "reason": "r", "duration": "1h"}`:                "target.origin",
		`{"target": {"zone": "zone-9"}, "reason": "r", "duration": "1h"}`:                             "target.zone",
		`{"target": {"zone": "zone-1"}, "reason": "r", "duration": "1h", "load_balancers": ["gone"]}`: "load_balancers[0]",
		`{"target": {"zone": "zone-1"}, "reason": "r"}`:                                               "duration",
		`{"target": {"zone": "zone-1"}, "reason": "r", "duration": "soon"}`:                           "duration",
		`{"target": {"zone": "zone-1"}, "reason": "r", "expires_at": "2001-01-01T00:00:00Z"}`:         "expires_at",
	} {
		p := e.do("POST", "/api/v1/shifts", body).problem(t, http.StatusBadRequest)
		if len(p.Errors) != 1 || p.Errors[0].Path != field {
			t.Errorf("%s: %+v, want one error on %s", body, p.Errors, field)
		}
	}
	var list struct{ Result []pools.Shift }
	e.do("GET", "/api/v1/shifts", nil).json(t, &list)
	if len(list.Result) != 0 {
		t.Fatalf("refused shifts stored: %+v", list.Result)
	}
}

// The default rule refuses a shift that leaves a load balancer no serving
// steering pool; nothing is stored; an admin overrides, and the audit
// entry says so; a write token cannot.
func TestShiftSafetyRule(t *testing.T) {
	t.Parallel()
	e := previewEnv(t, func(o *api.Options) { o.Token = "boot" })
	f := e.fixture()
	writer := e.newToken("ops", "read", "write")
	body := map[string]any{"target": map[string]any{"pool": f.pool}, "reason": "bad deploy", "duration": "1h"}
	p := e.do("POST", "/api/v1/shifts", body, "Authorization", "Bearer "+writer).problem(t, http.StatusConflict)
	if p.Type != "urn:glb:problem:safety-rule" || len(p.Safety) != 1 || p.Safety[0].Rule != pools.RuleMinServingPools ||
		p.Safety[0].LoadBalancer != f.lb || !strings.Contains(p.Detail, "min_serving_pools") || !strings.Contains(p.Detail, f.lb) {
		t.Fatalf("refusal %+v", p)
	}
	var list struct{ Result []pools.Shift }
	e.do("GET", "/api/v1/shifts", nil).json(t, &list)
	if len(list.Result) != 0 {
		t.Fatalf("a refused shift was stored: %+v", list.Result)
	}
	body["override"] = true
	e.do("POST", "/api/v1/shifts", body, "Authorization", "Bearer "+writer).problem(t, http.StatusForbidden)
	r := e.do("POST", "/api/v1/shifts", body)
	if r.status != http.StatusCreated {
		t.Fatalf("admin override: %d %s", r.status, r.body)
	}
	var got shiftResult
	r.json(t, &got)
	if !got.Result.Override || len(got.Result.Overridden) != 1 || got.Result.Overridden[0].Rule != pools.RuleMinServingPools {
		t.Fatalf("override %+v", got.Result)
	}
	var audit struct{ Result []pools.AuditEntry }
	e.do("GET", "/api/v1/audit?kind=shifts", nil).json(t, &audit)
	if len(audit.Result) != 1 || audit.Result[0].Actor != pools.ActorBootstrap ||
		!strings.Contains(string(audit.Result[0].After), `"override":true`) || !strings.Contains(string(audit.Result[0].After), `"rule":"min_serving_pools"`) {
		t.Fatalf("audit %+v", audit.Result)
	}
}
