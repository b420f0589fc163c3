package steering

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func shift(id string, target pools.ShiftTarget, from, to time.Duration, lbs ...string) pools.Shift {
	return pools.Shift{Meta: pools.Meta{ID: id}, Target: target, LoadBalancers: lbs, Reason: "test",
		StartsAt: t0.Add(from), ExpiresAt: t0.Add(to)}
}

func compileAt(t testing.TB, w *world, at time.Time) *Snapshot {
	t.Helper()
	s := w.compileAt(t, func() time.Time { return at })
	return s
}

// twoPools: www fails over from primary to secondary; each has a zone-1
// and a zone-2 origin.
func twoPools() *world {
	w := newWorld()
	w.pool("primary", origin{"a1", "192.0.2.1", "zone-1", 1}, origin{"a2", "192.0.2.2", "zone-2", 1})
	w.pool("secondary", origin{"b1", "198.51.100.1", "zone-1", 1}, origin{"b2", "198.51.100.2", "zone-2", 1})
	w.pool("fallback", origin{"f1", "203.0.113.1", "zone-3", 1})
	l := w.lb("www", []string{"primary", "secondary"}, "fallback")
	l.Answers = 0
	w.lb("api", []string{"primary", "secondary"}, "fallback").Answers = 0
	return w
}

func TestShiftedPoolIsNotServingUntilExpiry(t *testing.T) {
	t.Parallel()
	w := twoPools()
	w.cfg.Shifts = []pools.Shift{shift("s1", pools.ShiftTarget{Pool: "primary"}, time.Second, 6*time.Second, "lb-www")}
	for _, tc := range []struct {
		at   time.Duration
		www  []string
		next time.Duration
	}{
		{0, []string{"a1", "a2"}, time.Second},               // scheduled
		{time.Second, []string{"b1", "b2"}, 6 * time.Second}, // in force
		{5999 * time.Millisecond, []string{"b1", "b2"}, 6 * time.Second},
		{6 * time.Second, []string{"a1", "a2"}, 0}, // expired: back, nothing pending
	} {
		s := compileAt(t, w, t0.Add(tc.at))
		_, tr, got := decide(t, s, "www.glb.example.com", Request{}, nil)
		if !slices.Equal(got, tc.www) {
			t.Errorf("at +%v www answered %v, want %v", tc.at, got, tc.www)
		}
		if _, _, api := decide(t, s, "api.glb.example.com", Request{}, nil); !slices.Equal(api, []string{"a1", "a2"}) {
			t.Errorf("at +%v api (not listed in the shift) answered %v", tc.at, api)
		}
		var want time.Time
		if tc.next != 0 {
			want = t0.Add(tc.next)
		}
		if !s.NextShiftBoundary().Equal(want) {
			t.Errorf("at +%v next boundary %v, want %v", tc.at, s.NextShiftBoundary(), want)
		}
		if tc.at == time.Second && (len(tr.Candidates[0].Shifts) != 1 || tr.Candidates[0].Chosen) {
			t.Errorf("explain of the shifted pool: %+v", tr.Candidates[0])
		}
	}
}

func TestShiftEndedEarly(t *testing.T) {
	t.Parallel()
	w := twoPools()
	sh := shift("s1", pools.ShiftTarget{Pool: "primary"}, 0, time.Hour)
	end := t0.Add(time.Minute)
	sh.EndedAt = &end
	w.cfg.Shifts = []pools.Shift{sh}
	if _, _, got := decide(t, compileAt(t, w, t0.Add(30*time.Second)), "www.glb.example.com", Request{}, nil); !slices.Equal(got, []string{"b1", "b2"}) {
		t.Errorf("before the early end: %v", got)
	}
	if _, _, got := decide(t, compileAt(t, w, end), "www.glb.example.com", Request{}, nil); !slices.Equal(got, []string{"a1", "a2"}) {
		t.Errorf("after the early end: %v", got)
	}
}

// A zone shift leaves that zone's origins out of every pool, like down
// origins: zonal affinity recomputes its sets without them.
func TestZoneShiftRecomputesAffinity(t *testing.T) {
	t.Parallel()
	for _, spill := range []pools.Spillover{pools.AffinitySpillCrossZone, pools.AffinityStayWithinZone, pools.AffinityDisabled} {
		w := twoPools()
		w.cfg.LoadBalancers[0].ZonalAffinity = pools.ZonalAffinity{Spillover: spill}
		s := compileAt(t, w, t0)
		_, _, before := decide(t, s, "www.glb.example.com", Request{Client: client("zone-1")}, nil)
		w.cfg.Shifts = []pools.Shift{shift("z", pools.ShiftTarget{Zone: "zone-1"}, 0, time.Hour)}
		s = compileAt(t, w, t0)
		_, tr, got := decide(t, s, "www.glb.example.com", Request{Client: client("zone-1")}, nil)
		if !slices.Equal(got, []string{"a2"}) {
			t.Errorf("%s: zone-1 client answered %v with zone-1 shifted, want [a2] (before: %v)", spill, got, before)
		}
		// The sets of SPEC §4 with a1 as a down origin: B keeps it, A does not.
		a := tr.Affinity
		if !slices.Equal(a.A, []string{"a2"}) || !slices.Equal(a.B, []string{"a1", "a2"}) || !slices.Equal(a.M, []string{"a2"}) {
			t.Errorf("%s: sets A=%v B=%v C=%v I=%v M=%v", spill, a.A, a.B, a.C, a.I, a.M)
		}
		if spill != pools.AffinityDisabled && (!slices.Equal(a.C, []string{"a1"}) || len(a.I) != 0) {
			t.Errorf("%s: C=%v I=%v, want [a1] []", spill, a.C, a.I)
		}
		if _, _, got := decide(t, s, "www.glb.example.com", Request{Client: client("zone-2")}, nil); !slices.Equal(got, []string{"a2"}) {
			t.Errorf("%s: zone-2 client answered %v", spill, got)
		}
	}
}

// An origin shift that leaves a pool fewer than minimum_origins makes it
// fail over.
func TestOriginShiftCountsAsDown(t *testing.T) {
	t.Parallel()
	w := twoPools()
	w.cfg.Pools[0].MinimumOrigins = 2
	w.cfg.Shifts = []pools.Shift{shift("o", pools.ShiftTarget{Origin: "primary/a1"}, 0, time.Hour)}
	if _, _, got := decide(t, compileAt(t, w, t0), "www.glb.example.com", Request{}, nil); !slices.Equal(got, []string{"b1", "b2"}) {
		t.Errorf("answered %v, want the secondary pool", got)
	}
	w.cfg.Pools[0].MinimumOrigins = 1
	if _, _, got := decide(t, compileAt(t, w, t0), "www.glb.example.com", Request{}, nil); !slices.Equal(got, []string{"a2"}) {
		t.Errorf("answered %v, want [a2]", got)
	}
}

func TestShiftHarmLastServingPool(t *testing.T) {
	t.Parallel()
	w := twoPools()
	w.down("secondary", "b1", "b2")
	s := compileAt(t, w, t0)
	p := shift("new", pools.ShiftTarget{Pool: "primary"}, 0, time.Hour)
	harms := s.ShiftHarm(nil, &p)
	if len(harms) != 2 || harms[0].Rule != pools.RuleMinServingPools || harms[0].Serving != 0 {
		t.Fatalf("harms %+v, want min_serving_pools on both load balancers", harms)
	}
	p.LoadBalancers = []string{"lb-api"}
	if harms := s.ShiftHarm(nil, &p); len(harms) != 1 || harms[0].LoadBalancer != "lb-api" {
		t.Fatalf("harms %+v, want api only", harms)
	}
	// Healthy secondary: the shift is safe, but not with the secondary
	// shifted too (a stored shift in force at the same time).
	w.health.Origins = map[pools.OriginKey]pools.OriginHealth{}
	s = compileAt(t, w, t0)
	p.LoadBalancers = nil
	if harms := s.ShiftHarm(nil, &p); len(harms) != 0 {
		t.Fatalf("harms %+v, want none", harms)
	}
	other := shift("other", pools.ShiftTarget{Pool: "secondary"}, 30*time.Minute, 2*time.Hour)
	if harms := s.ShiftHarm([]pools.Shift{other}, &p); len(harms) != 2 {
		t.Fatalf("harms with an overlapping shift %+v, want two", harms)
	}
	ended := other
	end := t0
	ended.EndedAt = &end
	if harms := s.ShiftHarm([]pools.Shift{ended}, &p); len(harms) != 0 {
		t.Fatalf("harms with an ended shift %+v, want none", harms)
	}
	// min 0 turns the rule off; max_shifted_zones limits zone shifts.
	w.cfg.LoadBalancers[0].Safety.MinServingPools = 0
	w.cfg.LoadBalancers[1].Safety = pools.Safety{MinServingPools: 0, MaxShiftedZones: 1}
	s = compileAt(t, w, t0)
	if harms := s.ShiftHarm([]pools.Shift{other}, &p); len(harms) != 0 {
		t.Fatalf("rule off: %+v", harms)
	}
	z1, z2 := shift("z1", pools.ShiftTarget{Zone: "zone-1"}, 0, time.Hour), shift("z2", pools.ShiftTarget{Zone: "zone-2"}, 0, time.Hour)
	if harms := s.ShiftHarm([]pools.Shift{z1}, &z2); len(harms) != 1 || harms[0].Rule != pools.RuleMaxShiftedZones {
		t.Fatalf("second zone: %+v", harms)
	}
}

func TestAllDownPolicies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		action pools.AllDownAction
		addrs  []string
		down   Down
	}{
		{pools.AllDownFallback, nil, DownFallback},
		{pools.AllDownNoData, nil, DownNoData},
		{pools.AllDownRefused, nil, DownRefused},
		{pools.AllDownAddresses, []string{"192.0.2.99", "2001:db8::99"}, DownAddresses},
	} {
		w := twoPools()
		w.cfg.LoadBalancers[0].AllDown = pools.AllDown{Action: tc.action, Addresses: tc.addrs}
		w.down("primary", "a1", "a2")
		w.cfg.Shifts = []pools.Shift{shift("s", pools.ShiftTarget{Pool: "secondary"}, 0, time.Hour)}
		s := compileAt(t, w, t0)
		ans, tr, got := decide(t, s, "www.glb.example.com", Request{}, nil)
		if ans.Down != tc.down || tr.AllDown.Action != string(tc.action) || !tr.AllDown.Used {
			t.Errorf("%s: down %v, explain %+v", tc.action, ans.Down, tr.AllDown)
		}
		if tc.down == DownFallback {
			if !slices.Equal(got, []string{"f1"}) || !ans.Fallback {
				t.Errorf("fallback: answered %v", got)
			}
			continue
		}
		if ans.N != 0 || ans.Pool != -1 {
			t.Errorf("%s: answered %v from pool %d", tc.action, got, ans.Pool)
		}
		if tc.down == DownAddresses {
			lb := s.LoadBalancer("www.glb.example.com")
			if a := lb.Sorry(QTypeA); len(a) != 1 || a[0].String() != "192.0.2.99" || len(tr.Records) != 1 {
				t.Errorf("sorry A %v, explain records %+v", a, tr.Records)
			}
			if a := lb.Sorry(QTypeAAAA); len(a) != 1 || a[0].String() != "2001:db8::99" {
				t.Errorf("sorry AAAA %v", a)
			}
		}
		// A serving pool answers as before whatever the policy.
		w.cfg.Shifts = nil
		w.health.Origins = map[pools.OriginKey]pools.OriginHealth{}
		if ans, _, got := decide(t, compileAt(t, w, t0), "www.glb.example.com", Request{}, nil); ans.Down != DownFallback || !slices.Equal(got, []string{"a1", "a2"}) {
			t.Errorf("%s with healthy pools: %v %v", tc.action, ans.Down, got)
		}
	}
}

func shedWorld(t *testing.T, policy pools.ShedPolicy) *Snapshot {
	w := twoPools()
	w.cfg.Pools[0].LoadShedding = pools.LoadShedding{DefaultPercent: 30, DefaultPolicy: policy}
	return w.compile(t)
}

func TestLoadSheddingHashIsStickyAndProportional(t *testing.T) {
	t.Parallel()
	s := shedWorld(t, pools.ShedHash)
	lb := s.LoadBalancer("www.glb.example.com")
	rnd := rand.New(rand.NewPCG(3, 4))
	var ans Answer
	shed := 0
	for i := range 2000 {
		sub := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 0}), 24)
		req := Request{Subnet: sub, SourcePrefix: 24, Client: client(""), Type: QTypeA}
		s.Decide(lb, &req, rnd, &ans, nil)
		first := ans.Pool
		if s.PoolID(first) == "secondary" {
			shed++
		}
		for range 3 {
			s.Decide(lb, &req, rnd, &ans, nil)
			if ans.Pool != first {
				t.Fatalf("subnet %v moved from pool %d to %d", sub, first, ans.Pool)
			}
		}
		if ans.Scope != 24 {
			t.Fatalf("hash shedding depends on the subnet: scope %d, want 24", ans.Scope)
		}
	}
	if pct := float64(shed) / 20; pct < 27 || pct > 33 {
		t.Errorf("%.1f %% of 2,000 subnets shed, want 30 ± 3", pct)
	}
}

func TestLoadSheddingRandom(t *testing.T) {
	t.Parallel()
	s := shedWorld(t, pools.ShedRandom)
	req := Request{Subnet: netip.MustParsePrefix("10.0.0.0/24"), SourcePrefix: 24, Type: QTypeA}
	shed := 0
	decideN(s, "www.glb.example.com", req, rand.New(rand.NewPCG(5, 6)), 10000, func(ans *Answer) {
		if s.PoolID(ans.Pool) == "secondary" {
			shed++
		}
	})
	if pct := float64(shed) / 100; pct < 27 || pct > 33 {
		t.Errorf("%.1f %% of 10,000 answers shed, want 30 ± 3", pct)
	}
	// The preview counts the odds: 70 / 30.
	sh := s.Preview(s.LoadBalancer("www.glb.example.com"), []Sample{{Region: "WEU"}}, QTypeA, nil)
	if got := sh.ByName(); fmt.Sprintf("%.2f %.2f", got["primary"], got["secondary"]) != "0.70 0.30" {
		t.Errorf("preview %v, want primary 0.70, secondary 0.30", got)
	}
}

// A pool that sheds with no later serving candidate keeps the query.
func TestLoadSheddingWithoutNextCandidateKeeps(t *testing.T) {
	t.Parallel()
	w := twoPools()
	w.cfg.Pools[0].LoadShedding = pools.LoadShedding{DefaultPercent: 100, DefaultPolicy: pools.ShedRandom}
	w.down("secondary", "b1", "b2")
	ans, tr, got := decide(t, compileAt(t, w, t0), "www.glb.example.com", Request{}, nil)
	if !slices.Equal(got, []string{"a1", "a2"}) || ans.Fallback || !tr.Candidates[0].Chosen || !tr.Candidates[0].Shed.Shed {
		t.Errorf("answered %v, candidates %+v", got, tr.Candidates)
	}
}

// shiftBench is the benchmark world with a shift in force on one of the
// load balancers' other pools and 30 % hash shedding on the first pool.
func shiftBench(t testing.TB) *Snapshot {
	s := benchWorld(t)
	cfg := *s.Config()
	cfg.Pools = slices.Clone(cfg.Pools)
	cfg.Pools[0].LoadShedding = pools.LoadShedding{DefaultPercent: 30, DefaultPolicy: pools.ShedHash}
	cfg.Shifts = []pools.Shift{
		{Meta: pools.Meta{ID: "s"}, Target: pools.ShiftTarget{Pool: "p2"}, StartsAt: time.Now().Add(-time.Hour), ExpiresAt: time.Now().Add(time.Hour)},
		{Meta: pools.Meta{ID: "z"}, Target: pools.ShiftTarget{Origin: "p0/o7"}, StartsAt: time.Now().Add(-time.Hour), ExpiresAt: time.Now().Add(time.Hour)},
	}
	out, err := Compile(&cfg, s.Health())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func BenchmarkDecideShifted(b *testing.B) { benchDecide(b, shiftBench(b)) }

// Global rules count the shifts that overlap the proposed one's window,
// across load balancers; a shift that changes no load balancer is never
// refused; GlobalSafetyNow judges the shifts in force.
func TestGlobalShiftHarm(t *testing.T) {
	t.Parallel()
	w := twoPools()
	s := compileAt(t, w, t0)
	rules := pools.SafetyRules{MaxShiftedPools: 1, MaxShiftedZones: 1}
	p := shift("new", pools.ShiftTarget{Pool: "secondary"}, 0, time.Hour)
	first := shift("first", pools.ShiftTarget{Pool: "primary"}, 0, time.Hour)
	first.LoadBalancers = []string{"lb-api"}
	harms := s.GlobalShiftHarm([]pools.Shift{first}, rules, &p)
	if len(harms) != 1 || harms[0].Rule != pools.RuleGlobalMaxShiftedPools || harms[0].Serving != 2 || len(harms[0].LoadBalancers) != 2 {
		t.Fatalf("second pool: %+v", harms)
	}
	later := shift("later", pools.ShiftTarget{Pool: "primary"}, 2*time.Hour, 3*time.Hour)
	if harms := s.GlobalShiftHarm([]pools.Shift{later}, rules, &p); len(harms) != 0 {
		t.Fatalf("a shift after this one's window counted: %+v", harms)
	}
	z1, z2 := shift("z1", pools.ShiftTarget{Zone: "zone-1"}, 0, time.Hour), shift("z2", pools.ShiftTarget{Zone: "zone-2"}, 0, time.Hour)
	if harms := s.GlobalShiftHarm([]pools.Shift{z1}, rules, &z2); len(harms) != 1 || harms[0].Rule != pools.RuleGlobalMaxShiftedZones {
		t.Fatalf("second zone: %+v", harms)
	}
	nowhere := shift("nowhere", pools.ShiftTarget{Zone: "zone-9"}, 0, time.Hour)
	if harms := s.GlobalShiftHarm([]pools.Shift{z1}, rules, &nowhere); len(harms) != 0 {
		t.Fatalf("a zone no origin carries: %+v", harms)
	}
	w.cfg.Shifts = []pools.Shift{first, p}
	s = compileAt(t, w, t0)
	if now := s.GlobalSafetyNow(rules); len(now) != 1 || now[0].Rule != pools.RuleGlobalMaxShiftedPools {
		t.Fatalf("in force: %+v", now)
	}
	if now := s.GlobalSafetyNow(pools.SafetyRules{}); len(now) != 0 {
		t.Fatalf("rules off: %+v", now)
	}
}
