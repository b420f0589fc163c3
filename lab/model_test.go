package main

import (
	"slices"
	"testing"
	"time"
)

// The lab judges answers by this model; these cases pin what it calls
// correct, so that a drill cannot pass on a model that accepts anything.
func TestWorldExpect(t *testing.T) {
	base := world{table: geography, sees: seesAll, rev: revAddr(1)}
	down := base
	down.down[0] = true
	rot := base
	rot.table = rotated
	weuOnly := base
	weuOnly.sees = [3]bool{true, false, false}
	blind := base
	blind.sees = [3]bool{}
	for _, tc := range []struct {
		name string
		w    world
		q    query
		pool int
	}{
		{"failover, all up", base, query{qFailover, 0}, 0},
		{"failover, WEU down", down, query{qFailover, 0}, 1},
		{"nearest of WEU", base, query{qNearest, 0}, 0},
		{"nearest of ENAM", base, query{qNearest, 1}, 1},
		{"nearest of NEAS", base, query{qNearest, 2}, 2},
		{"WEU down: WEU's next nearest", down, query{qNearest, 0}, 1},
		{"rotated: WEU's nearest is ENAM's", rot, query{qNearest, 0}, 1},
		{"rotated: NEAS's nearest is WEU's", rot, query{qNearest, 2}, 0},
		{"ENAM's client, only WEU's RTT known: WEU's row", weuOnly, query{qNearest, 1}, 0},
		{"no RTT at all: configured order", blind, query{qNearest, 2}, 0},
	} {
		got := tc.w.expect(tc.q)
		want := poolAddrs(tc.pool)
		if len(got) != len(want) || got[0] != want[0] {
			t.Errorf("%s: expect %v, want pool %s %v", tc.name, got, regions[tc.pool], want)
		}
	}
	if got := base.expect(query{qRev, 0}); len(got) != 1 || got[0] != revAddr(1) {
		t.Errorf("rev: %v", got)
	}
}

func TestTimelineGrace(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	old := world{table: geography, sees: seesAll, rev: revAddr(1)}
	upd := old
	upd.rev = revAddr(2)
	var tl timeline
	tl.add(t0, 0, everywhere(old))
	tl.add(t0.Add(10*time.Second), 2*time.Second, everywhere(upd))
	rev := query{qRev, 0}
	for _, tc := range []struct {
		at     time.Duration
		answer string
		ok     bool
	}{
		{5 * time.Second, revAddr(1), true},
		{5 * time.Second, revAddr(2), false}, // before the write
		{11 * time.Second, revAddr(1), true}, // within the grace
		{11 * time.Second, revAddr(2), true},
		{12 * time.Second, revAddr(1), false}, // the grace is over
		{12 * time.Second, revAddr(2), true},
		{5 * time.Second, "", false},
	} {
		if got := tl.ok(0, rev, t0.Add(tc.at), tc.answer); got != tc.ok {
			t.Errorf("at +%v, %q: ok %t, want %t", tc.at, tc.answer, got, tc.ok)
		}
	}
}

func TestSeesSomeKeepsOwnRegion(t *testing.T) {
	for n := range 3 {
		ws := seesSome(world{}, n)
		if len(ws) != 4 {
			t.Errorf("node %d: %d worlds, want the 4 subsets holding its own region", n, len(ws))
		}
		for _, w := range ws {
			if !w.sees[n] {
				t.Errorf("node %d: a world without its own region's RTTs: %v", n, w.sees)
			}
		}
	}
}

// TestSinceTakesOnlyLaterExchanges: the client's log is in the order
// exchanges ended; one sent before a drill started but ended after
// others had begun is not the drill's (it would be judged against no
// step, and count as wrong).
func TestSinceTakesOnlyLaterExchanges(t *testing.T) {
	t0 := time.Now()
	c := &client{log: []sample{
		{at: t0.Add(-3 * time.Millisecond), answer: "a"},
		{at: t0.Add(time.Millisecond), answer: "b"},
		{at: t0.Add(-time.Millisecond), answer: "late"}, // sent before t0, ended after b
		{at: t0.Add(2 * time.Millisecond), answer: "c"},
	}}
	var got []string
	for _, s := range c.since(t0) {
		got = append(got, s.answer)
	}
	if !slices.Equal(got, []string{"b", "c"}) {
		t.Fatalf("since(t0) = %v, want [b c]", got)
	}
}
