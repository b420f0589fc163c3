package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

// accessTests are the contract of the audit log and the token store.
var accessTests = []struct {
	name string
	fn   contractTest
}{
	{"AuditEveryWriteInItsTransaction", testAuditWrites},
	{"AuditFiltersAndPages", testAuditFilters},
	{"AuditHealthTransitionsOnce", testAuditHealth},
	{"AuditPrune", testAuditPrune},
	{"Tokens", testTokens},
	{"TSIGKeys", testTSIGKeys},
}

// audit returns every entry matching f, oldest first.
func audit(t *testing.T, s pools.Store, f pools.AuditFilter) []pools.AuditEntry {
	t.Helper()
	res, err := s.Audit(ctx(t), f, pools.Page{PerPage: 1000})
	if err != nil {
		t.Fatalf("audit: %v", err)
	}
	if res.TotalCount != len(res.Items) {
		t.Fatalf("audit: total %d, %d items", res.TotalCount, len(res.Items))
	}
	out := make([]pools.AuditEntry, len(res.Items))
	for i, e := range res.Items {
		out[len(out)-1-i] = e
	}
	return out
}

// reproduces fails unless raw decodes to exactly o.
func reproduces(t *testing.T, what string, raw json.RawMessage, o pools.Object) {
	t.Helper()
	got := pools.New(o.Kind())
	if err := json.Unmarshal(raw, got); err != nil {
		t.Fatalf("%s: %s: %v", what, raw, err)
	}
	sameObject(t, what, got, o)
}

func testAuditWrites(t *testing.T, c context.Context, s pools.Store) {
	c = pools.WithCaller(c, pools.Caller{Actor: "ci", Method: "POST"})
	z, err := s.Create(c, Zone("glb.example.com"))
	if err != nil {
		t.Fatal(err)
	}
	bad := Pool("", "no-such-monitor")
	if _, err := s.Create(c, bad); err == nil {
		t.Fatal("invalid pool accepted")
	}
	p, err := s.Create(c, Pool("eu", ""))
	if err != nil {
		t.Fatal(err)
	}
	c2, err := pools.Clone(p)
	if err != nil {
		t.Fatal(err)
	}
	p2 := c2.(*pools.Pool)
	p2.MinimumOrigins = 2
	pc := pools.WithCaller(ctx(t), pools.Caller{Actor: "ops", Method: "PATCH"})
	if _, err := s.Replace(pc, p2, 99); !errors.Is(err, pools.ErrStale) {
		t.Fatalf("stale replace: %v", err)
	}
	p3, err := s.Replace(pc, p2, p.ObjectMeta().Revision)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx(t), pools.KindPool, p.ObjectMeta().ID, 0); err != nil {
		t.Fatal(err)
	}
	rev, _ := s.Revision(ctx(t))

	es := audit(t, s, pools.AuditFilter{})
	if len(es) != 4 {
		t.Fatalf("%d entries, want 4 (create zone, create pool, update pool, delete pool): %+v", len(es), es)
	}
	want := []struct {
		actor, method, action string
		kind                  pools.Kind
		id                    string
	}{
		{"ci", "POST", pools.ActionCreate, pools.KindZone, z.ObjectMeta().ID},
		{"ci", "POST", pools.ActionCreate, pools.KindPool, p.ObjectMeta().ID},
		{"ops", "PATCH", pools.ActionUpdate, pools.KindPool, p.ObjectMeta().ID},
		{pools.ActorSystem, "", pools.ActionDelete, pools.KindPool, p.ObjectMeta().ID},
	}
	for i, w := range want {
		e := es[i]
		if e.Actor != w.actor || e.Method != w.method || e.Action != w.action || e.Kind != w.kind || e.ObjectID != w.id {
			t.Errorf("entry %d: %s %s %s %s %s, want %+v", i, e.Actor, e.Method, e.Action, e.Kind, e.ObjectID, w)
		}
		if i > 0 && e.ID <= es[i-1].ID {
			t.Errorf("entry %d: id %d not after %d", i, e.ID, es[i-1].ID)
		}
		if e.Time.IsZero() || time.Since(e.Time) > time.Minute {
			t.Errorf("entry %d: time %v", i, e.Time)
		}
	}
	if es[3].Revision != rev {
		t.Errorf("last entry at revision %d, store at %d", es[3].Revision, rev)
	}
	reproduces(t, "zone created", es[0].After, z)
	reproduces(t, "pool created", es[1].After, p)
	reproduces(t, "pool before update", es[2].Before, p)
	reproduces(t, "pool after update", es[2].After, p3)
	reproduces(t, "pool deleted", es[3].Before, p3)
	for i, raw := range []json.RawMessage{es[0].Before, es[1].Before, es[3].After} {
		if string(raw) != "null" {
			t.Errorf("side %d of a create or delete is %s, want null", i, raw)
		}
	}
}

func testAuditFilters(t *testing.T, c context.Context, s pools.Store) {
	a := pools.WithCaller(c, pools.Caller{Actor: "a"})
	b := pools.WithCaller(c, pools.Caller{Actor: "b"})
	var ids []string
	for i, c := range []context.Context{a, b, a, b, a} {
		n, err := s.Create(c, Network(fmt.Sprintf("10.%d.0.0/16", i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, n.ObjectMeta().ID)
	}
	mid := audit(t, s, pools.AuditFilter{})[2].Time
	if got := audit(t, s, pools.AuditFilter{Actor: "a"}); len(got) != 3 || got[1].ObjectID != ids[2] {
		t.Errorf("actor a: %d entries", len(got))
	}
	if got := audit(t, s, pools.AuditFilter{Kind: pools.KindNetwork, ObjectID: ids[3]}); len(got) != 1 || got[0].Actor != "b" {
		t.Errorf("by id: %+v", got)
	}
	if got := audit(t, s, pools.AuditFilter{Kind: pools.KindZone}); len(got) != 0 {
		t.Errorf("kind zones: %d entries", len(got))
	}
	since := audit(t, s, pools.AuditFilter{Since: mid})
	until := audit(t, s, pools.AuditFilter{Until: mid})
	if len(since)+len(until) != 5 || len(since) < 1 || since[0].Time.Before(mid) {
		t.Errorf("since %d + until %d entries, want 5 split at %v", len(since), len(until), mid)
	}
	res, err := s.Audit(ctx(t), pools.AuditFilter{}, pools.Page{Page: 2, PerPage: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.TotalCount != 5 || len(res.Items) != 2 || res.Items[0].ObjectID != ids[2] || res.Items[1].ObjectID != ids[1] {
		t.Errorf("page 2 of 2: total %d, %+v", res.TotalCount, res.Items)
	}
}

func testAuditHealth(t *testing.T, c context.Context, s pools.Store) {
	at := time.Now()
	down := pools.HealthTransition{Pool: "p", Origin: "o", Healthy: false, Reason: "connection refused",
		Regions: map[string]pools.RegionHealth{"WEU": {Nodes: 2, Healthy: 0, Reason: "connection refused"}}, Node: "n1"}
	up := down
	up.Healthy, up.Reason, up.Regions = true, "checks pass", map[string]pools.RegionHealth{"WEU": {Nodes: 2, Healthy: 2}}
	other := pools.HealthTransition{Pool: "p", Origin: "o2", Healthy: true, Reason: "checks pass"}
	steps := [][]pools.HealthTransition{
		{other},       // never recorded and healthy: nothing to say
		{down},        // goes down
		{down, other}, // a second node agrees: already recorded
		{up},          // back up
		{up},          // again
	}
	for _, st := range steps {
		if err := s.RecordHealth(c, at, st); err != nil {
			t.Fatal(err)
		}
	}
	es := audit(t, s, pools.AuditFilter{Kind: pools.KindHealth})
	if len(es) != 2 {
		t.Fatalf("%d health entries, want 2: %+v", len(es), es)
	}
	for i, w := range []pools.HealthTransition{down, up} {
		var got pools.HealthTransition
		if err := json.Unmarshal(es[i].After, &got); err != nil {
			t.Fatal(err)
		}
		sameObject(t, "health entry", got, w)
		if es[i].Actor != pools.ActorCluster || es[i].Action != pools.ActionHealth || es[i].ObjectID != "p/o" || es[i].Revision != 0 {
			t.Errorf("health entry %d: %+v", i, es[i])
		}
	}
	if rev, _ := s.Revision(c); rev != 0 {
		t.Errorf("health entries moved the revision to %d", rev)
	}
}

func testAuditPrune(t *testing.T, c context.Context, s pools.Store) {
	old := time.Now().Add(-100 * 24 * time.Hour)
	if err := s.RecordHealth(c, old, []pools.HealthTransition{{Pool: "p", Origin: "o", Reason: "down long ago"}}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, Monitor())
	n, err := s.PruneAudit(c, time.Now().Add(-90*24*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("pruned %d (%v), want 1", n, err)
	}
	if es := audit(t, s, pools.AuditFilter{}); len(es) != 1 || es[0].Kind != pools.KindMonitor {
		t.Errorf("left after pruning: %+v", es)
	}
}

func testTokens(t *testing.T, c context.Context, s pools.Store) {
	c = pools.WithCaller(c, pools.Caller{Actor: pools.ActorBootstrap, Method: "POST"})
	secret, hash := pools.NewTokenSecret()
	exp := time.Now().Add(time.Hour)
	tok, err := s.CreateToken(c, pools.Token{Name: "dash", Scopes: []pools.Scope{pools.ScopeRead}, ExpiresOn: &exp, Hash: hash})
	if err != nil {
		t.Fatal(err)
	}
	if tok.CreatedOn.IsZero() || tok.LastUsed != nil || !tok.ExpiresOn.Equal(pools.StoreTime(exp)) {
		t.Errorf("created %+v", tok)
	}
	_, hash2 := pools.NewTokenSecret()
	_, err = s.CreateToken(c, pools.Token{Name: "dash", Scopes: []pools.Scope{pools.ScopeWrite}, Hash: hash2})
	wantPaths(t, err, "name")
	_, err = s.CreateToken(c, pools.Token{Name: "bootstrap", Scopes: []pools.Scope{"root"}, Hash: hash2})
	wantPaths(t, err, "name", "scopes[0]")

	got, err := s.TokenByHash(ctx(t), pools.HashToken(secret))
	if err != nil || got.Name != "dash" || !bytes.Equal(got.Hash, hash) {
		t.Fatalf("by hash: %+v %v", got, err)
	}
	if _, err := s.TokenByHash(ctx(t), pools.HashToken(secret+"x")); !errors.Is(err, pools.ErrNotFound) {
		t.Errorf("wrong secret: %v", err)
	}
	used := time.Now()
	if err := s.TouchToken(ctx(t), "dash", used); err != nil {
		t.Fatal(err)
	}
	list, err := s.Tokens(ctx(t))
	if err != nil || len(list) != 1 || list[0].LastUsed == nil || !list[0].LastUsed.Equal(pools.StoreTime(used)) {
		t.Fatalf("tokens: %+v %v", list, err)
	}
	if b, _ := json.Marshal(list); bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte("hash")) {
		t.Errorf("a token's JSON shows its secret or hash: %s", b)
	}
	// The integrations scope and a token's zones are kept; a zone-scoped
	// token may only read or write.
	_, hash3 := pools.NewTokenSecret()
	if _, err := s.CreateToken(c, pools.Token{Name: "edns", Scopes: []pools.Scope{pools.ScopeWrite}, Zones: []string{"z1", "z2"}, Hash: hash3}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.TokenByHash(ctx(t), hash3); err != nil || !slices.Equal(got.Zones, []string{"z1", "z2"}) {
		t.Errorf("zones read back: %+v %v", got, err)
	}
	_, hash4 := pools.NewTokenSecret()
	if _, err := s.CreateToken(c, pools.Token{Name: "hooks", Scopes: []pools.Scope{pools.ScopeIntegrations}, Hash: hash4}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Token(ctx(t), "hooks"); err != nil || got.Zones != nil || !got.Allows(pools.ScopeWrite) || got.Allows(pools.ScopeAdmin) {
		t.Errorf("integrations token read back: %+v %v", got, err)
	}
	_, err = s.CreateToken(c, pools.Token{Name: "wide", Scopes: []pools.Scope{pools.ScopeAdmin}, Zones: []string{"z1", "z1", ""}, Hash: hash2})
	wantPaths(t, err, "scopes", "zones[1]", "zones[2]")
	dc := pools.WithCaller(ctx(t), pools.Caller{Actor: pools.ActorBootstrap, Method: "DELETE"})
	for _, name := range []string{"edns", "hooks"} {
		if err := s.DeleteToken(dc, name); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteToken(dc, "dash"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TokenByHash(ctx(t), hash); !errors.Is(err, pools.ErrNotFound) {
		t.Errorf("revoked token still found: %v", err)
	}
	if err := s.DeleteToken(dc, "dash"); !errors.Is(err, pools.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	es := audit(t, s, pools.AuditFilter{Kind: pools.KindToken, ObjectID: "dash"})
	if len(es) != 2 || es[0].Action != pools.ActionCreate || es[1].Action != pools.ActionDelete ||
		es[1].Method != "DELETE" || es[0].Actor != pools.ActorBootstrap {
		t.Fatalf("token audit: %+v", es)
	}
	for _, e := range es {
		if b, _ := json.Marshal(e); bytes.Contains(b, []byte(secret)) {
			t.Errorf("audit entry shows the secret: %s", b)
		}
	}
}
