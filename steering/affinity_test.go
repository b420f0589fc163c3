package steering

import (
	"fmt"
	"slices"
	"testing"

	"github.com/glb-dns/glb/pools"
)

// tenOrigins is the seeds' worked example: o1..o5 in zone-1, o6..o10 in
// zone-2; o9 and o10 unhealthy (eight healthy: all five of zone-1, three of
// zone-2).
func tenOrigins(t *testing.T, spill pools.Spillover, ratio float64) *Snapshot {
	w := newWorld()
	var os []origin
	for i := 1; i <= 10; i++ {
		zone := "zone-1"
		if i > 5 {
			zone = "zone-2"
		}
		os = append(os, origin{fmt.Sprintf("o%d", i), fmt.Sprintf("192.0.2.%d", i), zone, 1})
	}
	w.pool("p", os...)
	l := w.lb("www", []string{"p"}, "p")
	l.Answers = 0
	l.ZonalAffinity = pools.ZonalAffinity{Spillover: spill, SpilloverRatio: ratio}
	w.down("p", "o9", "o10")
	return w.compile(t)
}

func TestSeedWorkedExampleTenOrigins(t *testing.T) {
	t.Parallel()
	s := tenOrigins(t, pools.AffinitySpillCrossZone, 0.8)
	// zone-1 client: 5/5 = 1.0 >= 0.8, stays on the five zone-1 origins.
	_, tr, got := decide(t, s, "www.glb.example.com", Request{Client: client("zone-1")}, nil)
	if want := names("o", 1, 2, 3, 4, 5); !slices.Equal(got, want) {
		t.Errorf("zone-1 client got %v, want %v", got, want)
	}
	if tr.Affinity.Ratio == nil || *tr.Affinity.Ratio != 1.0 {
		t.Errorf("zone-1 ratio = %v, want 1.0", tr.Affinity.Ratio)
	}
	// zone-2 client: 3/5 = 0.6 < 0.8, spills to all eight healthy origins.
	_, tr, got = decide(t, s, "www.glb.example.com", Request{Client: client("zone-2")}, nil)
	if want := names("o", 1, 2, 3, 4, 5, 6, 7, 8); !slices.Equal(got, want) {
		t.Errorf("zone-2 client got %v, want %v", got, want)
	}
	if tr.Affinity.Ratio == nil || *tr.Affinity.Ratio != 0.6 {
		t.Errorf("zone-2 ratio = %v, want 0.6", tr.Affinity.Ratio)
	}
	if len(tr.Affinity.A) != 8 || len(tr.Affinity.B) != 10 || len(tr.Affinity.C) != 5 || len(tr.Affinity.I) != 3 {
		t.Errorf("sets |A|=%d |B|=%d |C|=%d |I|=%d, want 8 10 5 3",
			len(tr.Affinity.A), len(tr.Affinity.B), len(tr.Affinity.C), len(tr.Affinity.I))
	}
}

func TestSeedRatioOneAndZero(t *testing.T) {
	t.Parallel()
	// Ratio 1.0: any unhealthy origin in the client's zone spills.
	s := tenOrigins(t, pools.AffinitySpillCrossZone, 1.0)
	if _, _, got := decide(t, s, "www.glb.example.com", Request{Client: client("zone-2")}, nil); len(got) != 8 {
		t.Errorf("ratio 1.0, zone-2 client: got %v, want all eight healthy", got)
	}
	if _, _, got := decide(t, s, "www.glb.example.com", Request{Client: client("zone-1")}, nil); len(got) != 5 {
		t.Errorf("ratio 1.0, zone-1 client (all healthy): got %v, want the five of zone-1", got)
	}
	// Ratio 0.0: stay in zone while one healthy origin is left there.
	w := newWorld()
	w.pool("p", origin{"a1", "192.0.2.1", "zone-1", 1}, origin{"a2", "192.0.2.2", "zone-1", 1},
		origin{"b1", "192.0.2.3", "zone-2", 1})
	l := w.lb("www", []string{"p"}, "p")
	l.Answers = 0
	l.ZonalAffinity = pools.ZonalAffinity{Spillover: pools.AffinitySpillCrossZone, SpilloverRatio: 0}
	w.down("p", "a1")
	if _, _, got := decide(t, w.compile(t), "www.glb.example.com", Request{Client: client("zone-1")}, nil); !slices.Equal(got, []string{"a2"}) {
		t.Errorf("ratio 0 with one healthy left in zone: got %v, want [a2]", got)
	}
	w.down("p", "a2")
	if _, _, got := decide(t, w.compile(t), "www.glb.example.com", Request{Client: client("zone-1")}, nil); !slices.Equal(got, []string{"b1"}) {
		t.Errorf("ratio 0 with none healthy left in zone: got %v, want [b1] (A)", got)
	}
}

// TestAffinityTable covers every row of the SPEC §4 table.
func TestAffinityTable(t *testing.T) {
	t.Parallel()
	// Pool: z1a, z1b, z1c in zone-1; z2a, z2b in zone-2; x with no zone.
	build := func(spill pools.Spillover, ratio float64, down ...string) *Snapshot {
		w := newWorld()
		w.pool("p", origin{"z1a", "192.0.2.1", "zone-1", 1}, origin{"z1b", "192.0.2.2", "zone-1", 1},
			origin{"z1c", "192.0.2.3", "zone-1", 1}, origin{"z2a", "192.0.2.4", "zone-2", 1},
			origin{"z2b", "192.0.2.5", "zone-2", 1}, origin{"x", "192.0.2.6", "", 1})
		l := w.lb("www", []string{"p"}, "p")
		l.Answers = 0
		l.ZonalAffinity = pools.ZonalAffinity{Spillover: spill, SpilloverRatio: ratio}
		w.down("p", down...)
		return w.compile(t)
	}
	all := []string{"x", "z1a", "z1b", "z1c", "z2a", "z2b"}
	cases := []struct {
		name   string
		spill  pools.Spillover
		ratio  float64
		down   []string
		zone   string
		want   []string
		result string
	}{
		{"disabled gives A", pools.AffinityDisabled, 0, []string{"z1a"}, "zone-1", []string{"x", "z1b", "z1c", "z2a", "z2b"}, "zonal affinity disabled: M = A"},
		{"unknown client zone gives A", pools.AffinityStayWithinZone, 0, nil, "", all, "client zone unknown (not compatible): M = A"},
		{"no zonal match gives A", pools.AffinityStayWithinZone, 0, nil, "zone-9", all, "no zonal match (C empty): M = A"},
		{"stay within zone: I", pools.AffinityStayWithinZone, 0, []string{"z1a"}, "zone-1", []string{"z1b", "z1c"}, "stays in zone: M = I"},
		{"stay within zone: I empty gives C", pools.AffinityStayWithinZone, 0, []string{"z2a", "z2b"}, "zone-2", []string{"z2a", "z2b"}, "I empty, stay within zone: M = C"},
		{"spill ratio 0: I", pools.AffinitySpillCrossZone, 0, []string{"z1a", "z1b"}, "zone-1", []string{"z1c"}, "stays in zone: M = I"},
		{"spill ratio 0: I empty gives A", pools.AffinitySpillCrossZone, 0, []string{"z2a", "z2b"}, "zone-2", []string{"x", "z1a", "z1b", "z1c"}, "spills cross-zone: M = A"},
		{"spill ratio r: |I|/|C| >= r gives I", pools.AffinitySpillCrossZone, 0.6, []string{"z1a"}, "zone-1", []string{"z1b", "z1c"}, "stays in zone: M = I"},
		{"spill ratio r: |I|/|C| < r gives A", pools.AffinitySpillCrossZone, 0.7, []string{"z1a"}, "zone-1", []string{"x", "z1b", "z1c", "z2a", "z2b"}, "spills cross-zone: M = A"},
		{"spill ratio r: I empty gives A", pools.AffinitySpillCrossZone, 0.5, []string{"z2a", "z2b"}, "zone-2", []string{"x", "z1a", "z1b", "z1c"}, "spills cross-zone: M = A"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := build(c.spill, c.ratio, c.down...)
			_, tr, got := decide(t, s, "www.glb.example.com", Request{Client: client(c.zone)}, nil)
			if !slices.Equal(got, c.want) {
				t.Errorf("records %v, want %v", got, c.want)
			}
			if !slices.Equal(sorted(tr.Affinity.M), c.want) {
				t.Errorf("trace M %v, want %v", tr.Affinity.M, c.want)
			}
			if tr.Affinity.Result != c.result {
				t.Errorf("result %q, want %q", tr.Affinity.Result, c.result)
			}
		})
	}
}

// TestSeedFailoverExample: primary pool in zones A and B, failover pool in
// C and D, client in A.
func TestSeedFailoverExample(t *testing.T) {
	t.Parallel()
	w := newWorld()
	w.pool("primary", origin{"pa", "192.0.2.1", "A", 1}, origin{"pb", "192.0.2.2", "B", 1})
	w.pool("failover", origin{"fc", "192.0.2.3", "C", 1}, origin{"fd", "192.0.2.4", "D", 1})
	l := w.lb("www", []string{"primary", "failover"}, "failover")
	l.Answers = 0
	l.ZonalAffinity.Spillover = pools.AffinitySpillCrossZone
	_, tr, got := decide(t, w.compile(t), "www.glb.example.com", Request{Client: client("A")}, nil)
	if !slices.Equal(got, []string{"pa"}) || tr.Affinity.Result != "stays in zone: M = I" {
		t.Errorf("primary healthy: got %v (%s), want [pa] with a zonal match", got, tr.Affinity.Result)
	}
	w.down("primary", "pa", "pb")
	_, tr, got = decide(t, w.compile(t), "www.glb.example.com", Request{Client: client("A")}, nil)
	if !slices.Equal(got, []string{"fc", "fd"}) {
		t.Errorf("after failover: got %v, want [fc fd]", got)
	}
	if tr.Pool.ID != "failover" || len(tr.Affinity.C) != 0 || tr.Affinity.Result != "no zonal match (C empty): M = A" {
		t.Errorf("after failover: pool %s, C %v, result %q; want failover pool, C empty, M = A", tr.Pool.ID, tr.Affinity.C, tr.Affinity.Result)
	}
	if !slices.Equal(sorted(tr.Affinity.B), []string{"fc", "fd"}) {
		t.Errorf("B after failover = %v, want the failover pool's origins", tr.Affinity.B)
	}
}
