package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/pools"
)

// analyticsEnv is an API over a store holding two nodes' counts of the
// fixture's load balancer in the last few minutes: node-a and node-b
// each answered from origins a and b of the pool, to WEU and WNAM.
func analyticsEnv(t *testing.T) (*env, fixture, time.Time) {
	e := newEnv(t, nil)
	f := e.fixture()
	t0 := time.Now().Add(-5 * time.Minute).Truncate(time.Minute)
	row := func(at time.Duration, origin, region, country string, n int64) pools.AnswerCount {
		return pools.AnswerCount{Bucket: t0.Add(at), Step: pools.AnswerStepFine, LoadBalancer: f.lb, Pool: f.pool, Origin: origin,
			Region: region, Country: country, Rcode: "NOERROR", Answers: n}
	}
	ctx := t.Context()
	if err := e.store.AddAnswerCounts(ctx, "node-a", []pools.AnswerCount{
		row(0, "a", "WEU", "DE", 10), row(10*time.Second, "a", "WEU", "FR", 5), row(70*time.Second, "b", "WNAM", "US", 4),
	}); err != nil {
		t.Fatal(err)
	}
	if err := e.store.AddAnswerCounts(ctx, "node-b", []pools.AnswerCount{
		row(0, "a", "WEU", "DE", 1), row(70*time.Second, "b", "WEU", "DE", 2),
		{Bucket: t0, Step: 10, LoadBalancer: "other", Pool: f.pool, Origin: "a", Region: "WEU", Country: "DE", Rcode: "NOERROR", Answers: 1000},
	}); err != nil {
		t.Fatal(err)
	}
	return e, f, t0
}

func (e *env) analytics(q url.Values) api.Analytics {
	e.t.Helper()
	r := e.do("GET", "/api/v1/analytics?"+q.Encode(), nil)
	if r.status != http.StatusOK {
		e.t.Fatalf("GET analytics?%s: %d %s", q.Encode(), r.status, r.body)
	}
	var out struct{ Result api.Analytics }
	r.json(e.t, &out)
	return out.Result
}

// TestAnalytics: the totals sum both nodes' rows of the load balancer
// (found by id or name) per group, most first, and the series hold them
// at the step asked, one point per step, zeros included; the filters
// keep only their value.
func TestAnalytics(t *testing.T) {
	t.Parallel()
	e, f, t0 := analyticsEnv(t)
	since, until := t0.Format(time.RFC3339), t0.Add(2*time.Minute).Format(time.RFC3339)
	got := e.analytics(url.Values{"load_balancer": {f.lb}, "since": {since}, "until": {until}, "group_by": {"pool,origin,region"}, "step": {"1m"}})
	if got.Answers != 22 || got.Step != 60 || len(got.Totals) != 3 || got.Name != "www.glb.example.com" || got.LoadBalancer != f.lb {
		t.Fatalf("got %+v", got)
	}
	want := []string{"a WEU 16", "b WNAM 4", "b WEU 2"}
	for i, g := range got.Totals {
		if s := g["origin"].(string) + " " + g["region"].(string) + " " + fmtInt(g["answers"]); s != want[i] || g["pool"] != f.pool {
			t.Errorf("totals[%d] = %v, want %s", i, g, want[i])
		}
	}
	if s := got.Series[0]; len(s.Points) != 2 || s.Points[0].Answers != 16 || s.Points[1].Answers != 0 || !s.Points[1].Time.Equal(t0.Add(time.Minute)) || s.Group["origin"] != "a" {
		t.Errorf("series[0] = %+v", s)
	}
	// By name, 10 s steps, by country, only WEU.
	got = e.analytics(url.Values{"load_balancer": {"WWW.glb.example.com."}, "since": {since}, "until": {until}, "group_by": {"country"}, "region": {"WEU"}, "step": {"10"}})
	if got.Answers != 18 || len(got.Series) != 2 || len(got.Series[0].Points) != 12 || got.Totals[0]["country"] != "DE" || fmtInt(got.Totals[0]["answers"]) != "13" {
		t.Fatalf("by name, WEU by country: %+v", got)
	}
	if p := got.Series[0].Points; p[0].Answers != 11 || p[7].Answers != 2 || p[1].Answers != 0 {
		t.Errorf("DE at 10 s: %+v", p)
	}
	// No group: one total.
	got = e.analytics(url.Values{"load_balancer": {f.lb}, "since": {since}, "until": {until}, "group_by": {""}})
	if len(got.Totals) != 1 || fmtInt(got.Totals[0]["answers"]) != "22" || len(got.Totals[0]) != 1 {
		t.Errorf("no group: %+v", got.Totals)
	}
}

// fmtInt is a JSON number as a whole number.
func fmtInt(v any) string {
	f, _ := v.(float64)
	return fmt.Sprint(int64(f))
}

// TestAnalyticsErrors: every unknown parameter, dimension and filter
// value is a 400 naming what is allowed; an unknown load balancer a 404.
func TestAnalyticsErrors(t *testing.T) {
	t.Parallel()
	e, f, _ := analyticsEnv(t)
	for _, c := range []struct {
		q    string
		path string
		says string
	}{
		{"group_by=pool,colour", "group_by", "pool, origin, region, country, rcode"},
		{"region=MARS", "region", "WNAM"},
		{"country=ZZ", "country", "unknown"},
		{"rcode=NOPE", "rcode", "REFUSED"},
		{"pool=nope", "pool", f.pool},
		{"origin=zz", "origin", `"a"`},
		{"colour=red", "colour", "group_by"},
		{"step=15s", "step", "multiple of 10s"},
		{"step=10s&since=" + url.QueryEscape(time.Now().Add(-2*time.Hour).Format(time.RFC3339)), "step", "multiple of 1m"},
		{"step=1m&since=" + url.QueryEscape(time.Now().Add(-48*time.Hour).Format(time.RFC3339)), "step", "at most 1440"},
		{"since=yesterday", "since", "RFC 3339"},
	} {
		p := e.do("GET", "/api/v1/analytics?load_balancer="+f.lb+"&"+c.q, nil).problem(t, http.StatusBadRequest)
		if len(p.Errors) != 1 || p.Errors[0].Path != c.path || !strings.Contains(p.Errors[0].Message, c.says) {
			t.Errorf("%s: %+v, want one error at %s saying %q", c.q, p.Errors, c.path, c.says)
		}
	}
	if p := e.do("GET", "/api/v1/analytics", nil).problem(t, http.StatusBadRequest); !fieldPaths(p)["load_balancer"] {
		t.Errorf("no load balancer: %+v", p.Errors)
	}
	e.do("GET", "/api/v1/analytics?load_balancer=nope", nil).problem(t, http.StatusNotFound)
}
