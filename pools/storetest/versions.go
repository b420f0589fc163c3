package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/glb-dns/glb/pools"
)

// versionsFixture is a load balancer on pool eu (checked by monitor web)
// and an unrelated pool us, with a version history of five writes.
type versionsFixture struct {
	fixture
	eu, us *pools.Pool
}

func replace[T pools.Object](t *testing.T, s pools.Store, o T, change func(T)) T {
	t.Helper()
	c, err := pools.Clone(o)
	if err == nil {
		change(c.(T))
		c, err = s.Replace(ctx(t), c, o.ObjectMeta().Revision)
	}
	if err != nil {
		t.Fatalf("replace %s %s: %v", o.Kind().Singular(), o.ObjectMeta().ID, err)
	}
	return c.(T)
}

// newVersions makes, after the objects, the writes of versions:
// 1 the load balancer's creation, 2 eu's weights, 3 the monitor's path,
// (us's weights: no version), 4 the load balancer adds us, 5 us's weights.
func newVersions(t *testing.T, s pools.Store) versionsFixture {
	t.Helper()
	f := versionsFixture{fixture: newFixture(t, s)}
	f.eu = f.pool
	// us comes after the load balancer: its creation is no version.
	f.us = mustCreate(t, s, Pool("us", ""))
	f.eu = replace(t, s, f.eu, func(p *pools.Pool) { p.Origins[0].Weight = 0.9 })
	f.monitor = replace(t, s, f.monitor, func(m *pools.Monitor) { m.Path = "/v3" })
	f.us = replace(t, s, f.us, func(p *pools.Pool) { p.Origins[0].Weight = 0.2 })
	f.lb = replace(t, s, f.lb, func(l *pools.LoadBalancer) { l.DefaultPools = append(l.DefaultPools, f.us.ID) })
	f.us = replace(t, s, f.us, func(p *pools.Pool) { p.Origins[1].Weight = 0.7 })
	return f
}

// planRollback plans the rollback of lb to version n.
func planRollback(t *testing.T, s pools.Store, lb string, n int) *pools.Restore {
	t.Helper()
	plan, err := history(t, s, lb).PlanRollback(lb, n)
	if err != nil {
		t.Fatalf("plan the rollback of %s to %d: %v", lb, n, err)
	}
	return plan
}

func history(t *testing.T, s pools.Store, lb string) *pools.History {
	t.Helper()
	h, err := pools.ReadHistory(ctx(t), s, lb)
	if err != nil {
		t.Fatalf("history of %s: %v", lb, err)
	}
	return h
}

func versionObjects(t *testing.T, h *pools.History, lb string, n int) pools.VersionObjects {
	t.Helper()
	v, err := h.Find(lb, n)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := v.Objects()
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// content is an object's JSON without what the store sets on each write.
func content(t *testing.T, o pools.Object) string {
	t.Helper()
	b, err := pools.ContentJSON(o)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// stored reads the objects of a version back from the store, in the
// version's order.
func stored(t *testing.T, s pools.Store, v pools.VersionObjects) []string {
	t.Helper()
	var out []string
	get := func(k pools.Kind, id string) {
		o, err := s.Get(ctx(t), k, id)
		if err != nil {
			t.Fatalf("get %s %s: %v", k.Singular(), id, err)
		}
		out = append(out, content(t, o))
	}
	get(pools.KindLoadBalancer, v.LoadBalancer.ID)
	for _, p := range v.Pools {
		get(pools.KindPool, p.ID)
	}
	for _, m := range v.Monitors {
		get(pools.KindMonitor, m.ID)
	}
	return out
}

func contents(t *testing.T, v pools.VersionObjects) []string {
	out := []string{content(t, v.LoadBalancer)}
	for i := range v.Pools {
		out = append(out, content(t, &v.Pools[i]))
	}
	for i := range v.Monitors {
		out = append(out, content(t, &v.Monitors[i]))
	}
	return out
}

func changes(v pools.Version) []string {
	var out []string
	for _, c := range v.Changes {
		out = append(out, string(c.Kind)+"/"+c.ID+" "+c.Action)
	}
	return out
}

func testVersionNumbers(t *testing.T, _ context.Context, s pools.Store) {
	f := newVersions(t, s)
	// A write to the zone (the load balancer's, but not versioned) and to
	// an unrelated pool make no version.
	replace(t, s, f.zone, func(z *pools.Zone) { z.TTL = 600 })
	h := history(t, s, f.lb.ID)
	want := [][]string{
		{"load_balancers/" + f.lb.ID + " create"},
		{"pools/" + f.eu.ID + " update"},
		{"monitors/" + f.monitor.ID + " update"},
		{"load_balancers/" + f.lb.ID + " update"},
		{"pools/" + f.us.ID + " update"},
	}
	if len(h.Versions) != len(want) {
		var got [][]string
		for _, v := range h.Versions {
			got = append(got, changes(v))
		}
		t.Fatalf("%d versions, want %d: %v", len(h.Versions), len(want), got)
	}
	for i, v := range h.Versions {
		if v.Version != i+1 || !slices.Equal(changes(v), want[i]) {
			t.Errorf("version %d: number %d, changes %v; want %d, %v", i+1, v.Version, changes(v), i+1, want[i])
		}
		if i > 0 && v.Revision <= h.Versions[i-1].Revision {
			t.Errorf("version %d at revision %d, not after %d", v.Version, v.Revision, h.Versions[i-1].Revision)
		}
	}
	if v := h.Versions[0]; v.Actor != pools.ActorSystem || v.Time.IsZero() {
		t.Errorf("version 1: %+v, want the time and the actor of the write", v)
	}

	// Version 2: the load balancer as created, eu with its new weights,
	// the monitor as it was; us is not part of it.
	v2 := versionObjects(t, h, f.lb.ID, 2)
	if v2.LoadBalancer == nil || len(v2.Pools) != 1 || len(v2.Monitors) != 1 {
		t.Fatalf("version 2 objects: %+v", v2)
	}
	if v2.LoadBalancer.Revision != 1 || v2.Pools[0].Origins[0].Weight != 0.9 || v2.Pools[0].Revision != 2 || v2.Monitors[0].Path != "/" {
		t.Errorf("version 2: lb revision %d, eu weight %v revision %d, monitor path %q",
			v2.LoadBalancer.Revision, v2.Pools[0].Origins[0].Weight, v2.Pools[0].Revision, v2.Monitors[0].Path)
	}
	// Version 5: everything as stored now.
	v5 := versionObjects(t, h, f.lb.ID, 5)
	if got, want := contents(t, v5), stored(t, s, v5); !slices.Equal(got, want) || len(v5.Pools) != 2 {
		t.Errorf("version 5 differs from the stored objects:\n got %v\nwant %v", got, want)
	}

	if _, err := h.Find(f.lb.ID, 6); !errors.Is(err, pools.ErrNotFound) {
		t.Errorf("version 6: %v, want ErrNotFound", err)
	}
	if _, err := h.Find(f.lb.ID, 0); !errors.Is(err, pools.ErrNotFound) {
		t.Errorf("version 0: %v, want ErrNotFound", err)
	}
	if _, err := pools.ReadHistory(ctx(t), s, "no-such-lb"); !errors.Is(err, pools.ErrNotFound) {
		t.Errorf("history of an unknown load balancer: %v, want ErrNotFound", err)
	}
}

func testAuditKinds(t *testing.T, _ context.Context, s pools.Store) {
	newVersions(t, s)
	got := audit(t, s, pools.AuditFilter{Kinds: []pools.Kind{pools.KindMonitor, pools.KindZone}})
	var kinds []string
	for _, e := range got {
		kinds = append(kinds, string(e.Kind)+" "+e.Action)
	}
	// Oldest first: the zone's creation, the monitor's, its update.
	want := []string{"zones create", "monitors create", "monitors update"}
	if !slices.Equal(kinds, want) {
		t.Errorf("kinds monitors and zones: %v, want %v", kinds, want)
	}
}

func testRollback(t *testing.T, _ context.Context, s pools.Store) {
	f := newVersions(t, s)
	h := history(t, s, f.lb.ID)
	v2 := versionObjects(t, h, f.lb.ID, 2)
	plan := planRollback(t, s, f.lb.ID, 2)
	// eu stands as at version 2: it is not written again; us is not part
	// of version 2 and is left as it is.
	var planned []string
	for _, w := range plan.Writes {
		planned = append(planned, string(w.Object.Kind())+"/"+w.Object.ObjectMeta().ID)
	}
	if want := []string{"monitors/" + f.monitor.ID, "load_balancers/" + f.lb.ID}; !slices.Equal(planned, want) {
		t.Errorf("planned writes %v, want %v", planned, want)
	}
	c := pools.WithCaller(ctx(t), pools.Caller{Actor: "ops", Method: "POST"})
	rev, err := s.Restore(c, plan)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := stored(t, s, v2), contents(t, v2); !slices.Equal(got, want) {
		t.Errorf("after the rollback to version 2:\n got %v\nwant %v", got, want)
	}
	us, err := s.Get(ctx(t), pools.KindPool, f.us.ID)
	if err != nil || us.ObjectMeta().Revision != f.us.Revision {
		t.Errorf("us after the rollback: %v, %v; want it untouched at revision %d", us, err, f.us.Revision)
	}

	// One revision, one version: version 6, a rollback to 2 by ops.
	h = history(t, s, f.lb.ID)
	if len(h.Versions) != 6 {
		t.Fatalf("%d versions after the rollback, want 6", len(h.Versions))
	}
	v6 := h.Versions[5]
	if v6.Revision != rev || v6.RollbackTo != 2 || v6.Actor != "ops" || len(v6.Changes) != 2 {
		t.Errorf("version 6: revision %d, rollback_to %d, actor %s, changes %v; want revision %d, rollback_to 2, actor ops, 2 changes",
			v6.Revision, v6.RollbackTo, v6.Actor, changes(v6), rev)
	}
	entries := audit(t, s, pools.AuditFilter{Actor: "ops"})
	var got []string
	for _, e := range entries {
		if e.Revision != rev {
			t.Errorf("entry %s %s at revision %d, want %d", e.Kind, e.ObjectID, e.Revision, rev)
		}
		got = append(got, string(e.Kind)+"/"+e.ObjectID+" "+e.Action)
	}
	slices.Sort(got)
	want := []string{"load_balancers/" + f.lb.ID + " update", "monitors/" + f.monitor.ID + " update", "rollbacks/" + f.lb.ID + " create"}
	if !slices.Equal(got, want) {
		t.Errorf("audit entries of the rollback %v, want %v", got, want)
	}
	var r pools.Rollback
	for _, e := range entries {
		if e.Kind == pools.KindRollback {
			if err := json.Unmarshal(e.After, &r); err != nil {
				t.Fatal(err)
			}
		}
	}
	if r.LoadBalancer != f.lb.ID || r.Version != 2 || r.Revision != h.Versions[1].Revision || len(r.Changes) != 2 {
		t.Errorf("rollback entry %+v", r)
	}

	// Rolling back to where it stands writes nothing.
	if plan := planRollback(t, s, f.lb.ID, 6); len(plan.Writes) != 0 {
		t.Errorf("plan to the current version: %+v; want no writes", plan)
	}
}

// A rollback whose last write fails leaves none of its writes.
func testRollbackAtomic(t *testing.T, _ context.Context, s pools.Store) {
	f := newVersions(t, s)
	// The load balancer's old name now belongs to another: its write, the
	// plan's last, is refused after the monitor's and eu's.
	f.lb = replace(t, s, f.lb, func(l *pools.LoadBalancer) { l.Name = "web.glb.example.com" })
	mustCreate(t, s, LoadBalancer("www.glb.example.com", f.zone.ID, f.eu.ID))
	plan := planRollback(t, s, f.lb.ID, 1)
	if len(plan.Writes) != 3 {
		t.Fatalf("plan of %d writes, want 3 (monitor, eu, load balancer)", len(plan.Writes))
	}
	before := audit(t, s, pools.AuditFilter{})
	_, err := s.Restore(ctx(t), plan)
	wantPaths(t, err, "load_balancers/"+f.lb.ID+".name")
	for _, o := range []pools.Object{f.monitor, f.eu, f.lb} {
		got, err := s.Get(ctx(t), o.Kind(), o.ObjectMeta().ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.ObjectMeta().Revision != o.ObjectMeta().Revision {
			t.Errorf("%s %s at revision %d after a refused rollback, want %d", o.Kind().Singular(), o.ObjectMeta().ID, got.ObjectMeta().Revision, o.ObjectMeta().Revision)
		}
	}
	if after := audit(t, s, pools.AuditFilter{}); len(after) != len(before) {
		t.Errorf("a refused rollback left %d audit entries", len(after)-len(before))
	}
}

// A write that lands between reading the versions and the rollback makes
// the rollback stale rather than lost.
func testRollbackStale(t *testing.T, _ context.Context, s pools.Store) {
	f := newVersions(t, s)
	plan := planRollback(t, s, f.lb.ID, 2)
	f.monitor = replace(t, s, f.monitor, func(m *pools.Monitor) { m.Path = "/other" })
	if _, err := s.Restore(ctx(t), plan); !errors.Is(err, pools.ErrStale) {
		t.Fatalf("rollback over a newer write: %v, want ErrStale", err)
	}
	got, _ := s.Get(ctx(t), pools.KindMonitor, f.monitor.ID)
	if got.(*pools.Monitor).Path != "/other" {
		t.Errorf("the newer write was overwritten")
	}
}

// A pool deleted since the version is created again under its id.
func testRollbackRecreates(t *testing.T, _ context.Context, s pools.Store) {
	f := newVersions(t, s)
	f.lb = replace(t, s, f.lb, func(l *pools.LoadBalancer) { l.DefaultPools = []string{f.eu.ID} })
	if err := s.Delete(ctx(t), pools.KindPool, f.us.ID, 0); err != nil {
		t.Fatal(err)
	}
	h := history(t, s, f.lb.ID)
	// The deletion of us is not a version: the load balancer had dropped
	// it the write before.
	if len(h.Versions) != 6 {
		t.Fatalf("%d versions, want 6", len(h.Versions))
	}
	v5 := versionObjects(t, h, f.lb.ID, 5)
	if _, err := s.Restore(ctx(t), planRollback(t, s, f.lb.ID, 5)); err != nil {
		t.Fatal(err)
	}
	if got, want := stored(t, s, v5), contents(t, v5); !slices.Equal(got, want) {
		t.Errorf("after the rollback to version 5:\n got %v\nwant %v", got, want)
	}
}

// A deleted load balancer keeps its versions: the deletion is the last,
// with no load balancer to restore, and a rollback to the one before it
// creates it again as it was.
func testVersionsOfADeletedLoadBalancer(t *testing.T, _ context.Context, s pools.Store) {
	f := newVersions(t, s)
	if err := s.Delete(ctx(t), pools.KindLoadBalancer, f.lb.ID, 0); err != nil {
		t.Fatal(err)
	}
	h := history(t, s, f.lb.ID)
	if len(h.Versions) != 6 || !slices.Equal(changes(h.Versions[5]), []string{"load_balancers/" + f.lb.ID + " delete"}) {
		t.Fatalf("%d versions, the last %v; want 6, the deletion last", len(h.Versions), changes(h.Versions[len(h.Versions)-1]))
	}
	if v6 := versionObjects(t, h, f.lb.ID, 6); v6.LoadBalancer != nil || len(v6.Pools) != 0 {
		t.Errorf("version 6 (the deletion) has objects: %+v", v6)
	}
	if _, err := h.PlanRollback(f.lb.ID, 6); err == nil {
		t.Error("a rollback to the deletion was planned")
	} else {
		wantPaths(t, err, "version")
	}
	v5 := versionObjects(t, h, f.lb.ID, 5)
	if _, err := s.Restore(ctx(t), planRollback(t, s, f.lb.ID, 5)); err != nil {
		t.Fatal(err)
	}
	if got, want := stored(t, s, v5), contents(t, v5); !slices.Equal(got, want) {
		t.Errorf("after the rollback to version 5:\n got %v\nwant %v", got, want)
	}
}
