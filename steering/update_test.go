package steering

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/glb-dns/glb/geodata"
	"github.com/glb-dns/glb/pools"
)

// seqRand replays one seeded sequence, so that two snapshots given the
// same seed draw the same numbers.
type seqRand struct{ r *rand.Rand }

func (s seqRand) Float64() float64 { return s.r.Float64() }

// answersOf renders every decision of every load balancer of s for a
// fixed set of clients: two snapshots that answer alike render alike.
func answersOf(t *testing.T, s *Snapshot) string {
	t.Helper()
	var out []string
	regions := []string{"", "WEU", "ENAM", "EEU", "SAF"}
	for _, lb := range s.LoadBalancers() {
		if got := s.LoadBalancer(lb.Name()); got != lb {
			t.Errorf("load balancer %s: found by its name as %v", lb.Name(), got)
		}
		for i, region := range regions {
			for _, typ := range []QType{QTypeA, QTypeAAAA} {
				req := Request{Client: geodata.Location{Region: region, Zone: "z1", Prefix: 24},
					Subnet: netip.MustParsePrefix(fmt.Sprintf("198.51.%d.0/24", i)), SourcePrefix: -1, Type: typ}
				var ans Answer
				var tr Trace
				s.Decide(lb, &req, seqRand{rand.New(rand.NewPCG(uint64(i), uint64(typ)))}, &ans, &tr)
				b, err := json.Marshal(tr)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, string(b))
			}
		}
	}
	if s.LoadBalancer("nothing.glb.example.com") != nil {
		t.Error("a name no load balancer has is found")
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// TestUpdateAnswersAsCompile: after any sequence of configuration and
// health changes, the snapshot Update builds from the previous one answers
// every load balancer exactly as a full Compile of the same input, and
// recompiles only the pools that changed.
func TestUpdateAnswersAsCompile(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 11))
			w := newWorld()
			for i := range 8 {
				var os []origin
				for j := range 1 + r.IntN(6) {
					addr := fmt.Sprintf("192.0.2.%d", 10*i+j+1)
					if r.IntN(3) == 0 {
						addr = fmt.Sprintf("2001:db8::%d", 10*i+j+1)
					}
					os = append(os, origin{fmt.Sprintf("o%d", j), addr, []string{"z1", "z2", ""}[r.IntN(3)], 0.5})
				}
				w.pool(fmt.Sprintf("p%d", i), os...)
			}
			policies := []pools.SteeringPolicy{pools.SteeringOff, pools.SteeringDynamicLatency, pools.SteeringRandom, pools.SteeringGeo}
			for i := range 6 {
				l := w.lb(fmt.Sprintf("lb%d", i), []string{fmt.Sprintf("p%d", i), fmt.Sprintf("p%d", i+1)}, fmt.Sprintf("p%d", i+2))
				l.SteeringPolicy = policies[i%len(policies)]
				if l.SteeringPolicy == pools.SteeringGeo {
					l.RegionPools = map[string][]string{"WEU": {"p7"}}
				}
			}
			w.health.RTT = map[pools.PoolRegion]time.Duration{}
			cfg, h := &w.cfg, &w.health
			prev, err := CompileFor(cfg, h.h(), Options{Region: "WEU"})
			if err != nil {
				t.Fatal(err)
			}
			now := time.Unix(1e9, 0)
			next := 100
			for step := range 20 {
				cfg2 := *cfg
				cfg2.Revision++
				h2 := &flatHealth{Origins: maps.Clone(h.Origins), RTT: maps.Clone(h.RTT)}
				var changed []string
				switch op := r.IntN(7); op {
				case 0, 1: // a pool's weights and minimum
					cfg2.Pools = slices.Clone(cfg.Pools)
					i := r.IntN(len(cfg2.Pools))
					p := &cfg2.Pools[i]
					p.Origins = slices.Clone(p.Origins)
					p.Origins[r.IntN(len(p.Origins))].Weight = float64(r.IntN(5)) / 4
					p.MinimumOrigins = 1 + r.IntN(2)
					p.Revision++
					p.ModifiedOn = now.Add(time.Duration(step) * time.Second)
					changed = append(changed, p.ID)
				case 2: // an origin's health
					p := cfg.Pools[r.IntN(len(cfg.Pools))]
					k := pools.OriginKey{Pool: p.ID, Origin: p.Origins[r.IntN(len(p.Origins))].Name}
					if _, down := h2.Origins[k]; down {
						delete(h2.Origins, k)
					} else {
						h2.Origins[k] = pools.OriginHealth{Reason: "test"}
					}
				case 3: // RTT seen from a region
					p := cfg.Pools[r.IntN(len(cfg.Pools))]
					h2.RTT[pools.PoolRegion{Pool: p.ID, Region: pools.Regions[r.IntN(4)]}] = time.Duration(1+r.IntN(100)) * time.Millisecond
				case 4: // a new pool and a load balancer on it
					id := fmt.Sprintf("p%d", next)
					next++
					p := pools.DefaultPool()
					p.ID, p.Name, p.Revision = id, id, 1
					o := pools.DefaultOrigin()
					o.Name, o.Address = "n", fmt.Sprintf("203.0.113.%d", next%250)
					p.Origins = []pools.Origin{o}
					cfg2.Pools = append(slices.Clone(cfg.Pools), p)
					l := pools.DefaultLoadBalancer()
					l.ID, l.Zone, l.Name, l.DefaultPools, l.FallbackPool = "lb-"+id, "z", id+".glb.example.com", []string{id, "p0"}, id
					l.SteeringPolicy, l.Revision = pools.SteeringDynamicLatency, 1
					cfg2.LoadBalancers = append(slices.Clone(cfg.LoadBalancers), l)
				case 6: // two load balancers swap names
					cfg2.LoadBalancers = slices.Clone(cfg.LoadBalancers)
					a, b := &cfg2.LoadBalancers[r.IntN(len(cfg2.LoadBalancers))], &cfg2.LoadBalancers[r.IntN(len(cfg2.LoadBalancers))]
					a.Name, b.Name = b.Name, a.Name
					a.Revision++
					b.Revision++
				case 5: // drop the newest added pool with its load balancer, or disable one
					cfg2.LoadBalancers = slices.Clone(cfg.LoadBalancers)
					last := &cfg2.LoadBalancers[len(cfg2.LoadBalancers)-1]
					if len(cfg.Pools) > 8 && last.ID == "lb-"+cfg.Pools[len(cfg.Pools)-1].ID {
						cfg2.LoadBalancers = cfg2.LoadBalancers[:len(cfg2.LoadBalancers)-1]
						cfg2.Pools = slices.Clone(cfg.Pools[:len(cfg.Pools)-1])
					} else {
						l := &cfg2.LoadBalancers[r.IntN(len(cfg2.LoadBalancers))]
						l.Enabled = !l.Enabled
						l.Revision++
					}
				}
				hc := pools.ChangedPools(h.h(), h2.h())
				inc, err := Update(prev, &cfg2, h2.h(), hc)
				if err != nil {
					t.Fatalf("step %d: update: %v", step, err)
				}
				full, err := CompileFor(&cfg2, h2.h(), Options{Region: "WEU"})
				if err != nil {
					t.Fatalf("step %d: compile: %v", step, err)
				}
				if a, b := answersOf(t, inc), answersOf(t, full); a != b {
					t.Fatalf("step %d: the updated snapshot answers differently from a full compile\nupdate:  %s\ncompile: %s", step, a, b)
				}
				for _, id := range changed {
					if !slices.Contains(inc.Rebuilt(), inc.poolByID[id]) {
						t.Errorf("step %d: changed pool %s not rebuilt", step, id)
					}
				}
				if len(inc.Rebuilt()) > len(changed)+len(hc)+1 {
					t.Errorf("step %d: %d pools rebuilt for %d changed and %d health changes", step, len(inc.Rebuilt()), len(changed), len(hc))
				}
				if inc.Parent() != prev.Generation() {
					t.Errorf("step %d: parent %d, want %d", step, inc.Parent(), prev.Generation())
				}
				cfg, h, prev = &cfg2, h2, inc
			}
		})
	}
}

// TestDynamicLatencyUnknownClientUsesOwnRegion: a client of unknown
// location is ranked by the RTT from the answering node's region, and the
// trace says so; a node without a region keeps the configured order.
func TestDynamicLatencyUnknownClientUsesOwnRegion(t *testing.T) {
	w := newWorld()
	w.pool("eu", origin{"e", "192.0.2.1", "", 1})
	w.pool("us", origin{"u", "192.0.2.2", "", 1})
	l := w.lb("www", []string{"eu", "us"}, "eu")
	l.SteeringPolicy = pools.SteeringDynamicLatency
	w.health.RTT = map[pools.PoolRegion]time.Duration{
		{Pool: "eu", Region: "WEU"}: 10 * time.Millisecond, {Pool: "us", Region: "WEU"}: 90 * time.Millisecond,
		{Pool: "eu", Region: "ENAM"}: 90 * time.Millisecond, {Pool: "us", Region: "ENAM"}: 10 * time.Millisecond,
	}
	unknown := Request{Client: geodata.Location{Prefix: -1}, SourcePrefix: -1, Type: QTypeA}
	for _, tc := range []struct{ node, pool, rttRegion, reason string }{
		{"WEU", "eu", "WEU", "client location unknown: this node's region (--region) WEU"},
		{"ENAM", "us", "ENAM", "client location unknown: this node's region (--region) ENAM"},
		// No RTT from SAF: the nearest region with data is WEU.
		{"SAF", "eu", "WEU", "client location unknown: this node's region (--region) SAF has no RTT data; nearest region with data: WEU"},
		{"", "eu", "", "client location unknown and this node has no region (--region): configured order"},
	} {
		s, err := CompileFor(&w.cfg, w.health.h(), Options{Region: tc.node})
		if err != nil {
			t.Fatal(err)
		}
		ans, tr, _ := decide(t, s, "www.glb.example.com", unknown, nil)
		if got := s.PoolID(ans.Pool); got != tc.pool {
			t.Errorf("node in %q: pool %s, want %s", tc.node, got, tc.pool)
		}
		if tr.RTT == nil || tr.RTT.Region != tc.rttRegion || tr.RTT.Reason != tc.reason {
			t.Errorf("node in %q: trace rtt %+v, want region %q reason %q", tc.node, tr.RTT, tc.rttRegion, tc.reason)
		}
	}
	// A located client still goes by its own region, whatever the node's.
	s, err := CompileFor(&w.cfg, w.health.h(), Options{Region: "WEU"})
	if err != nil {
		t.Fatal(err)
	}
	ans, tr, _ := decide(t, s, "www.glb.example.com", Request{Client: geodata.Location{Region: "ENAM", Prefix: 24}, SourcePrefix: -1, Type: QTypeA}, nil)
	if s.PoolID(ans.Pool) != "us" || tr.RTT == nil || tr.RTT.Reason != "client's region ENAM" {
		t.Errorf("client in ENAM on a WEU node: pool %s, trace %+v", s.PoolID(ans.Pool), tr.RTT)
	}
}
