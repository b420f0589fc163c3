package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

// testMonitorGroups: a pool's monitor group reads back as written, a
// monitor used only inside a group cannot be deleted, a group naming an
// unknown monitor is refused at its path, and monitor beside a different
// group is refused; each monitor's view of an origin survives the round
// trip through health changes and views, and a pool with one monitor has
// no per-monitor views.
func testMonitorGroups(t *testing.T, c context.Context, s pools.Store) {
	http := mustCreate(t, s, Monitor())
	tcp := Monitor()
	tcp.Type, tcp.Port = pools.MonitorTCP, 443
	tcp = mustCreate(t, s, tcp)

	p := Pool("grouped", "")
	p.Monitors = []pools.PoolMonitor{{Monitor: http.ID}, {Monitor: tcp.ID, MustBeHealthy: true}}
	p = mustCreate(t, s, p)
	got, err := s.Get(c, pools.KindPool, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameObject(t, "pool with a group", got.(*pools.Pool).Monitors, p.Monitors)
	single := mustCreate(t, s, Pool("single", http.ID))
	if single.Monitors == nil || len(single.Monitors) != 0 {
		t.Errorf("a pool with one monitor reads monitors %#v, want []", single.Monitors)
	}

	ce := conflictOf(t, s.Delete(c, pools.KindMonitor, tcp.ID, 0))
	if got := referrerIDs(ce); !slices.Equal(got, []string{"pool/" + p.ID}) {
		t.Errorf("referrers of a monitor used in a group = %v, want the grouped pool", got)
	}
	ce = conflictOf(t, s.Delete(c, pools.KindMonitor, http.ID, 0))
	want := []string{"pool/" + p.ID, "pool/" + single.ID}
	slices.Sort(want)
	if got := referrerIDs(ce); !slices.Equal(got, want) {
		t.Errorf("referrers of a monitor used alone and in a group = %v, want %v", got, want)
	}

	bad := Pool("bad", http.ID)
	bad.Monitors = []pools.PoolMonitor{{Monitor: tcp.ID, MustBeHealthy: true}, {Monitor: "nomonitor"}}
	_, err = s.Create(c, bad)
	wantPaths(t, err, "monitor", "monitors[1].monitor")
	// monitor X beside its own spelled-out group is the same thing.
	same := Pool("same", http.ID)
	same.Monitors = []pools.PoolMonitor{{Monitor: http.ID, MustBeHealthy: true}}
	mustCreate(t, s, same)

	t0 := pools.StoreTime(time.Now())
	grouped := pools.OriginState{Pool: p.ID, Origin: "a", Healthy: false, Reason: "tcp: connection refused", RTT: 3 * time.Millisecond,
		CheckedAt: t0, Monitors: []pools.MonitorState{
			{Monitor: http.ID, Healthy: true, RTT: 3 * time.Millisecond},
			{Monitor: tcp.ID, Healthy: false, Reason: "connection refused"},
		}}
	plain := state(single.ID, "a", true, t0)
	if err := s.PublishHealth(c, pools.HealthUpdate{Node: "n", Region: "WEU", Published: t0, Full: true,
		Origins: []pools.OriginState{grouped, plain}}); err != nil {
		t.Fatal(err)
	}
	sameObject(t, "view of the grouped pool", views(t, s, p.ID), []pools.NodeHealth{
		{Node: "n", Region: "WEU", Published: t0, Origins: []pools.OriginState{grouped}}})
	sameObject(t, "view of the single pool", views(t, s, single.ID), []pools.NodeHealth{
		{Node: "n", Region: "WEU", Published: t0, Origins: []pools.OriginState{plain}}})
	got1 := since(t, s, nil)["n"]
	sortStates(got1.Origins)
	want1 := []pools.OriginState{grouped, plain}
	sortStates(want1)
	sameObject(t, "changes of a group", got1.Origins, want1)

	// The monitors' views change alone: that is news too.
	cur := cursorsOf(map[string]pools.HealthUpdate{"n": got1})
	t1 := t0.Add(time.Second)
	grouped.Monitors = []pools.MonitorState{{Monitor: http.ID, Healthy: false, Reason: "HTTP 503"}, grouped.Monitors[1]}
	grouped.CheckedAt = t1
	if err := s.PublishHealth(c, pools.HealthUpdate{Node: "n", Region: "WEU", Published: t1,
		Origins: []pools.OriginState{grouped}}); err != nil {
		t.Fatal(err)
	}
	sameObject(t, "a monitor's view changed", since(t, s, cur)["n"].Origins, []pools.OriginState{grouped})
}
