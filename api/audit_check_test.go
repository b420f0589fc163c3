package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/pools"
)

// auditTrail keeps every write a test sends through env.do, so that when
// the test ends the audit log can be held against it: each accepted write
// is there once, by the right actor, with a change that reproduces the
// object the API answered with; a refused write left nothing.
type auditTrail struct {
	mu     sync.Mutex
	writes []sentWrite
	actors map[string]string // secret → token name
}

type sentWrite struct {
	method, path, actor string
	status              int
	body                []byte
}

// actor registers the token name a secret authenticates as.
func (e *env) actor(secret, name string) {
	e.audit.mu.Lock()
	defer e.audit.mu.Unlock()
	if e.audit.actors == nil {
		e.audit.actors = map[string]string{}
	}
	e.audit.actors[secret] = name
}

func (e *env) noteWrite(req *http.Request, status int, body []byte) {
	if req.Method == http.MethodGet || req.Method == http.MethodHead || !strings.HasPrefix(req.URL.Path, "/api/v1/") {
		return
	}
	if strings.HasSuffix(req.URL.Path, "/preview") {
		return // a preview stores nothing, so the log must not grow
	}
	if strings.HasPrefix(req.URL.Path, "/api/v1/notifications/") && strings.HasSuffix(req.URL.Path, "/test") {
		return // a test event changes no configuration
	}
	if strings.HasSuffix(req.URL.Path, "/import") && !importApplied(body) {
		return // a dry run, or a file that changes nothing, stores nothing
	}
	if strings.HasSuffix(req.URL.Path, "/feed") || strings.HasPrefix(req.URL.Path, "/api/v1/feeds/") {
		return // words fed in: audited per word, unless renewed (feeds_test.go)
	}
	e.audit.mu.Lock()
	defer e.audit.mu.Unlock()
	actor := pools.ActorAnonymous
	if _, secret, ok := strings.Cut(req.Header.Get("Authorization"), " "); ok {
		actor = e.audit.actors[secret]
		if e.token != "" && secret == e.token {
			actor = pools.ActorBootstrap
		}
	}
	e.audit.writes = append(e.audit.writes, sentWrite{req.Method, req.URL.Path, actor, status, body})
}

// checkAudit runs when the test ends.
func (e *env) checkAudit() {
	t := e.t
	if t.Failed() {
		return
	}
	e.audit.mu.Lock()
	defer e.audit.mu.Unlock()
	var accepted []sentWrite
	for _, w := range e.audit.writes {
		if w.status/100 == 2 {
			accepted = append(accepted, w)
		}
	}
	var entries []pools.AuditEntry
	for page := 1; ; page++ {
		res, err := e.store.Audit(context.Background(), pools.AuditFilter{}, pools.Page{Page: page, PerPage: 1000})
		if errors.Is(err, pools.ErrUnavailable) && len(accepted) == 0 {
			return // the test closed the store, and nothing was written
		}
		if err != nil {
			t.Fatalf("audit: %v", err)
		}
		for _, en := range res.Items {
			if en.Kind != pools.KindHealth && en.Kind != pools.KindFeed {
				entries = append(entries, en)
			}
		}
		if len(res.Items) < 1000 {
			break
		}
	}
	want := 0
	for _, w := range accepted {
		if r, ok := rollbackOf(w); ok {
			// One entry per object written and the rollback's own; none
			// when everything stood as at the version.
			if len(r.Changes) > 0 {
				want += 1 + len(r.Changes)
			}
			continue
		}
		want++
	}
	if len(entries) != want {
		t.Errorf("audit log has %d entries for %d accepted writes (of %d sent) that make %d", len(entries), len(accepted), len(e.audit.writes), want)
	}
	used := make([]bool, len(entries))
	for _, w := range accepted {
		if r, ok := rollbackOf(w); ok {
			checkRollbackAudit(t, w, r, entries, used)
			continue
		}
		kind, id, result := writeTarget(w)
		if strings.HasSuffix(w.path, "/import") {
			// An import answers its diff, not the zone: the entry is the
			// zone's, at the serial the import answered.
			result = nil
		}
		found := false
		for i, en := range entries {
			if used[i] || en.Kind != kind || en.ObjectID != id || en.Method != w.method || en.Actor != w.actor {
				continue
			}
			if w.method == http.MethodDelete && kind == pools.KindShift {
				// Ending a shift keeps it, ended: the entry's after is it.
				if en.Action != pools.ActionEnd || !sameJSON(en.After, result) {
					continue
				}
			} else if w.method == http.MethodDelete {
				if string(en.After) != "null" || string(en.Before) == "null" {
					continue
				}
			} else if result == nil {
				if !sameSerial(en.After, w.body) {
					continue
				}
			} else if !sameJSON(en.After, result) {
				continue
			}
			used[i], found = true, true
			break
		}
		if !found {
			t.Errorf("%s %s (%d, by %s): no audit entry reproduces it; result %s", w.method, w.path, w.status, w.actor, result)
		}
	}
}

// writeTarget returns the kind and id a write changed and the object it
// answered with (the token without its secret).
func writeTarget(w sentWrite) (pools.Kind, string, map[string]any) {
	parts := strings.Split(strings.TrimPrefix(w.path, "/api/v1/"), "/")
	kind := pools.Kind(parts[0])
	var out struct{ Result map[string]any }
	_ = json.Unmarshal(w.body, &out)
	if w.path == "/api/v1/safety/rules" {
		return pools.KindSafetyRules, pools.SafetyRulesID, out.Result
	}
	// Derived from the clock on read, never stored.
	for _, k := range []string{"status", "current_step", "percent", "next_step_at"} {
		if kind == pools.KindShift || kind == pools.KindRollout {
			delete(out.Result, k)
		}
	}
	if len(parts) > 1 {
		return kind, parts[1], out.Result
	}
	id, _ := out.Result["id"].(string)
	delete(out.Result, "secret") // shown once (notifications), never audited
	if kind == pools.KindToken || kind == pools.KindTSIGKey {
		id, _ = out.Result["name"].(string)
		delete(out.Result, "secret")
	}
	return kind, id, out.Result
}

func sameJSON(raw json.RawMessage, want map[string]any) bool {
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		return false
	}
	return reflect.DeepEqual(got, want)
}

// importApplied reads an import's answer: did it store the zone?
func importApplied(body []byte) bool {
	var out struct{ Result api.ImportResult }
	return json.Unmarshal(body, &out) == nil && out.Result.Applied
}

// sameSerial: the zone an audit entry stored has the serial an import
// answered with.
func sameSerial(after json.RawMessage, body []byte) bool {
	var z pools.Zone
	var out struct{ Result api.ImportResult }
	return json.Unmarshal(after, &z) == nil && json.Unmarshal(body, &out) == nil && z.Serial == out.Result.Serial
}

// rollbackOf returns the answer of a rollback write.
func rollbackOf(w sentWrite) (api.RollbackResult, bool) {
	var out struct{ Result api.RollbackResult }
	if !strings.HasSuffix(w.path, "/rollback") || json.Unmarshal(w.body, &out) != nil {
		return out.Result, false
	}
	return out.Result, true
}

// checkRollbackAudit finds the entries of a rollback: its own (kind
// rollbacks, naming the version) and one per object it says it wrote, all
// at its revision, by its actor.
func checkRollbackAudit(t testing.TB, w sentWrite, r api.RollbackResult, entries []pools.AuditEntry, used []bool) {
	t.Helper()
	if len(r.Changes) == 0 {
		return
	}
	find := func(kind pools.Kind, id string, ok func(pools.AuditEntry) bool) {
		for i, en := range entries {
			if !used[i] && en.Kind == kind && en.ObjectID == id && en.Revision == r.Revision && en.Actor == w.actor && en.Method == w.method && ok(en) {
				used[i] = true
				return
			}
		}
		t.Errorf("%s %s (by %s): no audit entry of %s %s at revision %d", w.method, w.path, w.actor, kind, id, r.Revision)
	}
	find(pools.KindRollback, r.LoadBalancer, func(en pools.AuditEntry) bool {
		var rb pools.Rollback
		return json.Unmarshal(en.After, &rb) == nil && rb.Version == r.RollbackTo && len(rb.Changes) == len(r.Changes)
	})
	for _, c := range r.Changes {
		find(c.Kind, c.ID, func(en pools.AuditEntry) bool { return en.Action == c.Action })
	}
}
