package storetest

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

// testHealth: whole views published by two nodes read back as they were,
// each origin's CheckedAt being its node's heartbeat; publications notify
// watchers and leave the configuration revision alone.
func testHealth(t *testing.T, c context.Context, s pools.Store) {
	wctx, stop := context.WithCancel(c)
	defer stop()
	ch := s.Watch(wctx)
	base := watchUp(t, c, s, ch)
	at := pools.StoreTime(time.Now())
	a := pools.NodeHealth{Node: "a", Region: "WEU", Published: at, Origins: []pools.OriginState{
		{Pool: "p1", Origin: "o1", Healthy: false, Reason: "timeout", RTT: 0, CheckedAt: at},
		{Pool: "p1", Origin: "o2", Healthy: true, RTT: 12 * time.Millisecond, CheckedAt: at},
	}}
	b := pools.NodeHealth{Node: "b", Region: "ENAM", Published: at, Origins: []pools.OriginState{}}
	for _, h := range []pools.NodeHealth{a, b} {
		if err := s.PublishHealth(c, pools.FullUpdate(h)); err != nil {
			t.Fatalf("publish %s: %v", h.Node, err)
		}
	}
	waitChange(t, ch, "health publish", func(ch pools.Change) bool { return ch.Health })
	a.Origins[0].Healthy, a.Origins[0].Reason = true, ""
	a.Published = at.Add(time.Second)
	if err := s.PublishHealth(c, pools.FullUpdate(a)); err != nil {
		t.Fatal(err)
	}
	for i := range a.Origins {
		a.Origins[i].CheckedAt = a.Published
	}
	sameObject(t, "health views", views(t, s, ""), []pools.NodeHealth{a, b})
	if rev, _ := s.Revision(c); rev != base {
		t.Errorf("health publication moved the config revision to %d", rev)
	}
	if err := s.PublishHealth(c, pools.HealthUpdate{}); err == nil {
		t.Error("health update without a node name accepted")
	}
}

// views reads HealthViews with each view's origins sorted.
func views(t *testing.T, s pools.Store, pool string) []pools.NodeHealth {
	t.Helper()
	vs, err := s.HealthViews(ctx(t), pool)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		sortStates(v.Origins)
	}
	return vs
}

func sortStates(ss []pools.OriginState) {
	slices.SortFunc(ss, func(x, y pools.OriginState) int {
		return cmp.Or(cmp.Compare(x.Pool, y.Pool), cmp.Compare(x.Origin, y.Origin))
	})
}

// since reads HealthSince and keys the updates by node, origins sorted.
func since(t *testing.T, s pools.Store, cursors map[string]pools.HealthCursor) map[string]pools.HealthUpdate {
	t.Helper()
	ups, err := s.HealthSince(ctx(t), cursors)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]pools.HealthUpdate{}
	for i, u := range ups {
		if i > 0 && ups[i-1].Node >= u.Node {
			t.Errorf("updates not ordered by node: %s after %s", u.Node, ups[i-1].Node)
		}
		sortStates(u.Origins)
		slices.SortFunc(u.Removed, func(x, y pools.OriginKey) int {
			return cmp.Or(cmp.Compare(x.Pool, y.Pool), cmp.Compare(x.Origin, y.Origin))
		})
		out[u.Node] = u
	}
	return out
}

func cursorsOf(ups map[string]pools.HealthUpdate) map[string]pools.HealthCursor {
	out := map[string]pools.HealthCursor{}
	for n, u := range ups {
		out[n] = u.Cursor
	}
	return out
}

func state(pool, origin string, healthy bool, at time.Time) pools.OriginState {
	s := pools.OriginState{Pool: pool, Origin: origin, Healthy: healthy, RTT: 3 * time.Millisecond, CheckedAt: at}
	if !healthy {
		s.Reason, s.RTT = "connection refused", 0
	}
	return s
}

// testHealthChanges: a reader that follows a node's cursor gets the
// heartbeat and only what changed since; a reader without a cursor, with
// one of an earlier epoch (the node restarted) or one the store cannot
// have given gets the whole view; withdrawing an origin the node never
// published leaves no trace.
func testHealthChanges(t *testing.T, c context.Context, s pools.Store) {
	publish := func(u pools.HealthUpdate) {
		t.Helper()
		if err := s.PublishHealth(c, u); err != nil {
			t.Fatalf("publish %+v: %v", u, err)
		}
	}
	t0 := pools.StoreTime(time.Now())
	whole := []pools.OriginState{state("p1", "o1", true, t0), state("p1", "o2", false, t0), state("p1", "o3", true, t0), state("p2", "o1", true, t0)}
	publish(pools.HealthUpdate{Node: "a", Region: "WEU", Published: t0, Full: true, Origins: whole})

	got := since(t, s, nil)
	want := pools.HealthUpdate{Node: "a", Region: "WEU", Published: t0, Full: true, Origins: whole, Cursor: got["a"].Cursor}
	sameObject(t, "first read of a", got, map[string]pools.HealthUpdate{"a": want})
	cur := cursorsOf(got)

	// A heartbeat alone: the news is the time, the cursor stays.
	t1 := t0.Add(time.Second)
	publish(pools.HealthUpdate{Node: "a", Region: "WEU", Published: t1})
	got = since(t, s, cur)
	sameObject(t, "heartbeat", got, map[string]pools.HealthUpdate{"a": {Node: "a", Region: "WEU", Published: t1, Cursor: cur["a"]}})

	// Changes: o2 up, o4 new, o3 withdrawn; a stranger's withdrawal of an
	// origin never published is nothing. b appears.
	t2 := t1.Add(time.Second)
	publish(pools.HealthUpdate{Node: "a", Region: "WEU", Published: t2,
		Origins: []pools.OriginState{state("p1", "o2", true, t2), state("p1", "o4", false, t2)},
		Removed: []pools.OriginKey{{Pool: "p1", Origin: "o3"}, {Pool: "p1", Origin: "never"}}})
	publish(pools.HealthUpdate{Node: "b", Region: "ENAM", Published: t2, Full: true, Origins: []pools.OriginState{state("p1", "o1", false, t2)}})
	got = since(t, s, cur)
	if a := got["a"]; a.Cursor.Epoch != cur["a"].Epoch || a.Cursor.Seq <= cur["a"].Seq {
		t.Errorf("cursor after a change %+v, from %+v: want the same epoch and a later seq", a.Cursor, cur["a"])
	}
	sameObject(t, "changes since the cursor", got, map[string]pools.HealthUpdate{
		"a": {Node: "a", Region: "WEU", Published: t2, Cursor: got["a"].Cursor,
			Origins: []pools.OriginState{state("p1", "o2", true, t2), state("p1", "o4", false, t2)},
			Removed: []pools.OriginKey{{Pool: "p1", Origin: "o3"}}},
		"b": {Node: "b", Region: "ENAM", Published: t2, Full: true, Cursor: got["b"].Cursor,
			Origins: []pools.OriginState{state("p1", "o1", false, t2)}},
	})
	cur = cursorsOf(got)

	// An origin both changed and withdrawn in one update ends withdrawn.
	t3 := t2.Add(time.Second)
	publish(pools.HealthUpdate{Node: "a", Region: "WEU", Published: t3,
		Origins: []pools.OriginState{state("p1", "o4", true, t3)}, Removed: []pools.OriginKey{{Pool: "p1", Origin: "o4"}}})
	got = since(t, s, cur)
	sameObject(t, "changed and withdrawn", got["a"], pools.HealthUpdate{Node: "a", Region: "WEU", Published: t3,
		Cursor: got["a"].Cursor, Removed: []pools.OriginKey{{Pool: "p1", Origin: "o4"}}})
	sameObject(t, "b without news", got["b"], pools.HealthUpdate{Node: "b", Region: "ENAM", Published: t2, Cursor: cur["b"]})
	cur = cursorsOf(got)

	// The whole view now, by pool.
	sameObject(t, "views of p2", views(t, s, "p2"), []pools.NodeHealth{
		{Node: "a", Region: "WEU", Published: t3, Origins: []pools.OriginState{state("p2", "o1", true, t3)}},
		{Node: "b", Region: "ENAM", Published: t2, Origins: []pools.OriginState{}},
	})

	// a restarts: its first publication is whole, and a reader at the old
	// epoch gets the whole view, not removals.
	t4 := t3.Add(time.Second)
	publish(pools.HealthUpdate{Node: "a", Region: "NEAS", Published: t4, Full: true, Origins: []pools.OriginState{state("p1", "o1", false, t4)}})
	got = since(t, s, cur)
	if got["a"].Cursor.Epoch == cur["a"].Epoch {
		t.Errorf("epoch %d unchanged by a full publication", got["a"].Cursor.Epoch)
	}
	sameObject(t, "after a restart", got["a"], pools.HealthUpdate{Node: "a", Region: "NEAS", Published: t4, Full: true,
		Cursor: got["a"].Cursor, Origins: []pools.OriginState{state("p1", "o1", false, t4)}})

	// A cursor the store never gave (a restored backup): the whole view.
	ahead := cursorsOf(got)
	ahead["a"] = pools.HealthCursor{Epoch: ahead["a"].Epoch, Seq: ahead["a"].Seq + 5}
	if a := since(t, s, ahead)["a"]; !a.Full || len(a.Origins) != 1 {
		t.Errorf("cursor ahead of the store: %+v; want the whole view", a)
	}
	if rev, _ := s.Revision(c); rev != 0 {
		t.Errorf("health publications moved the config revision to %d", rev)
	}
}

// testHealthFollowed: nodes publish random changes, heartbeats and whole
// views; a reader that applies what HealthSince returns, from wherever it
// last read, always holds what HealthViews shows.
func testHealthFollowed(t *testing.T, c context.Context, s pools.Store) {
	rng := rand.New(rand.NewPCG(11, 6))
	nodes := []string{"n1", "n2", "n3"}
	truth := map[string]map[pools.OriginKey]pools.OriginState{}
	held := map[string]map[pools.OriginKey]pools.OriginState{}
	beats := map[string]time.Time{}
	cursors := map[string]pools.HealthCursor{}
	at := pools.StoreTime(time.Now())
	for step := range 80 {
		at = at.Add(time.Second)
		n := nodes[rng.IntN(len(nodes))]
		u := pools.HealthUpdate{Node: n, Region: "R" + n, Published: at, Full: truth[n] == nil || rng.IntN(10) == 0}
		if u.Full {
			truth[n] = map[pools.OriginKey]pools.OriginState{}
		}
		for range rng.IntN(4) {
			k := pools.OriginKey{Pool: fmt.Sprintf("p%d", rng.IntN(3)), Origin: fmt.Sprintf("o%d", rng.IntN(4))}
			if _, ok := truth[n][k]; ok && rng.IntN(3) == 0 && !u.Full {
				u.Removed = append(u.Removed, k)
				delete(truth[n], k)
				continue
			}
			st := state(k.Pool, k.Origin, rng.IntN(2) == 0, at)
			st.RTT = time.Duration(rng.IntN(5000)) * time.Microsecond
			if !st.Healthy {
				st.RTT = 0
			}
			u.Origins = slices.DeleteFunc(u.Origins, func(o pools.OriginState) bool { return o.Key() == k })
			u.Origins = append(u.Origins, st)
			truth[n][k] = st
		}
		if err := s.PublishHealth(c, u); err != nil {
			t.Fatalf("step %d: publish %+v: %v", step, u, err)
		}
		beats[n] = at
		if rng.IntN(3) != 0 {
			continue
		}
		ups, err := s.HealthSince(c, cursors)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range ups {
			if u.Full || held[u.Node] == nil {
				held[u.Node] = map[pools.OriginKey]pools.OriginState{}
			}
			for _, st := range u.Origins {
				held[u.Node][st.Key()] = st
			}
			for _, k := range u.Removed {
				delete(held[u.Node], k)
			}
			cursors[u.Node] = u.Cursor
		}
		asViews := func(m map[string]map[pools.OriginKey]pools.OriginState) []pools.NodeHealth {
			out := []pools.NodeHealth{}
			for _, n := range slices.Sorted(maps.Keys(m)) {
				v := pools.NodeHealth{Node: n, Region: "R" + n, Published: beats[n], Origins: []pools.OriginState{}}
				for _, st := range m[n] {
					st.CheckedAt = beats[n]
					v.Origins = append(v.Origins, st)
				}
				sortStates(v.Origins)
				out = append(out, v)
			}
			return out
		}
		// A reader without cursors (a node that starts) gets every
		// node's whole view.
		fresh := map[string]map[pools.OriginKey]pools.OriginState{}
		for n, u := range since(t, s, nil) {
			if !u.Full || len(u.Removed) > 0 {
				t.Errorf("step %d: first read of %s: full %v, removed %v; want a whole view", step, n, u.Full, u.Removed)
			}
			fresh[n] = map[pools.OriginKey]pools.OriginState{}
			for _, st := range u.Origins {
				fresh[n][st.Key()] = st
			}
		}
		want := asViews(truth)
		sameObject(t, fmt.Sprintf("step %d: the store's views", step), views(t, s, ""), want)
		sameObject(t, fmt.Sprintf("step %d: what the reader holds", step), asViews(held), want)
		sameObject(t, fmt.Sprintf("step %d: what a reader without cursors reads", step), asViews(fresh), want)
		if t.Failed() {
			return
		}
	}
}
