package steering

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/geodata"
	"github.com/glb-dns/glb/pools"
)

// locator locates subnets by the world's operator networks alone.
func locator(t *testing.T, w *world) Locator {
	t.Helper()
	nets, err := geodata.NewNetworks(w.cfg.Networks)
	if err != nil {
		t.Fatal(err)
	}
	return geodata.Locator{Networks: nets} // no GeoIP database
}

func assertFlat(t *testing.T, what string, got Shares, want map[string]float64) {
	t.Helper()
	g := got.ByName()
	for k, v := range want {
		if math.Abs(g[k]-v) > 1e-9 {
			t.Errorf("%s: %s has %.4f, want %.4f (all: %v)", what, k, g[k], v, g)
		}
	}
	for k, v := range g {
		if _, ok := want[k]; !ok && v != 0 {
			t.Errorf("%s: %s has %.4f, want nothing", what, k, v)
		}
	}
}

// drawn decides n times for each client with real random draws and
// returns the shares of first records: what Preview must predict.
func drawn(t *testing.T, s *Snapshot, lb *LB, sample []Sample, loc Locator, n int) map[string]float64 {
	t.Helper()
	rnd := rand.New(rand.NewPCG(3, 4))
	out := map[string]float64{}
	var ans Answer
	for _, c := range sample {
		req := lb.sampleRequest(c, QTypeA, loc)
		for range n {
			s.Decide(lb, &req, rnd, &ans, nil)
			w := 1 / float64(n*len(sample))
			out[s.PoolName(ans.Pool)] += w
			if ans.N > 0 {
				o := s.Origin(ans.Origins[0])
				out[s.PoolName(ans.Pool)+"/"+o.Name] += w
			}
		}
	}
	return out
}

func subnets(list ...string) []Sample {
	out := []Sample{}
	for _, s := range list {
		out = append(out, Sample{Subnet: netip.MustParsePrefix(s)})
	}
	return out
}

// TestPreviewWeights: a 0.4/0.3/0.3 pool's origins get exactly 40/30/30
// of the answers, which real draws approach; an unsaved edit changes the
// preview of the edited snapshot and leaves the served one alone.
func TestPreviewWeights(t *testing.T) {
	t.Parallel()
	w := newWorld()
	w.pool("p", origin{"A", "192.0.2.1", "", 0.4}, origin{"B", "192.0.2.2", "", 0.3}, origin{"C", "192.0.2.3", "", 0.3})
	w.pool("next", origin{"N", "192.0.2.9", "", 1})
	w.pool("fb", origin{"F", "192.0.2.10", "", 1})
	w.lb("www", []string{"p", "next"}, "fb")
	s := w.compile(t)
	lb := s.LoadBalancer("www.glb.example.com")
	loc := locator(t, w)
	sample := append(subnets("198.51.100.0/24", "203.0.113.0/24"), Sample{Region: "WEU"}, Sample{Country: "JP"})
	want := map[string]float64{"p": 1, "p/A": 0.4, "p/B": 0.3, "p/C": 0.3}
	got := s.Preview(lb, sample, QTypeA, loc)
	assertFlat(t, "now", got, want)
	for k, v := range drawn(t, s, lb, sample, loc, 20000) {
		if math.Abs(want[k]-v) > 0.01 {
			t.Errorf("real draws give %s %.4f, the preview %.4f", k, v, want[k])
		}
	}

	edited := w.cfg.Pools[0]
	edited.Origins = append([]pools.Origin(nil), edited.Origins...)
	edited.Origins[0].Weight = 0.1
	after, err := s.With(&edited)
	if err != nil {
		t.Fatal(err)
	}
	assertFlat(t, "after a weight edit", after.Preview(after.LoadBalancer("www.glb.example.com"), sample, QTypeA, loc),
		map[string]float64{"p": 1, "p/A": 0.1 / 0.7, "p/B": 0.3 / 0.7, "p/C": 0.3 / 0.7})
	assertFlat(t, "served snapshot after With", s.Preview(lb, sample, QTypeA, loc), want)

	// Disabling the pool moves everything to the next one; a new origin
	// there takes its weight's share.
	off := w.cfg.Pools[0]
	off.Enabled = false
	next := w.cfg.Pools[1]
	next.Origins = append(append([]pools.Origin(nil), next.Origins...), pools.Origin{Name: "N2", Address: "192.0.2.19", Weight: 3, Enabled: true})
	after, err = s.With(&off, &next)
	if err != nil {
		t.Fatal(err)
	}
	assertFlat(t, "after disabling p", after.Preview(after.LoadBalancer("www.glb.example.com"), sample, QTypeA, loc),
		map[string]float64{"next": 1, "next/N": 0.25, "next/N2": 0.75})

	// An edit of the load balancer alone: next first.
	lbEdit := w.cfg.LoadBalancers[0]
	lbEdit.DefaultPools = []string{"next", "p"}
	after, err = s.With(&lbEdit)
	if err != nil {
		t.Fatal(err)
	}
	assertFlat(t, "after reordering", after.Preview(after.LoadBalancer("www.glb.example.com"), sample, QTypeA, loc),
		map[string]float64{"next": 1, "next/N": 1})

	// An AAAA question to IPv4 origins gets no record.
	if got := s.Preview(lb, sample, QTypeAAAA, loc); got.NoRecords != 1 || len(got.Pools[0].Origins) != 0 {
		t.Errorf("AAAA preview of IPv4 origins: %+v, want every answer without records", got)
	}
}

// TestPreviewRandomSteering: the pool random_steering puts first counts
// by its odds among the healthy pools, as real draws do.
func TestPreviewRandomSteering(t *testing.T) {
	t.Parallel()
	w := newWorld()
	w.pool("a", origin{"a1", "192.0.2.1", "", 1})
	w.pool("b", origin{"b1", "192.0.2.2", "", 1})
	w.pool("c", origin{"c1", "192.0.2.3", "", 1})
	l := w.lb("www", []string{"a", "b", "c"}, "c")
	l.SteeringPolicy = pools.SteeringRandom
	l.RandomSteering = pools.RandomSteering{DefaultWeight: 1, PoolWeights: map[string]float64{"a": 0.5, "b": 0.3, "c": 0.2}}
	sample := []Sample{{Region: "ENAM"}, {Region: "SAS"}}
	for _, tc := range []struct {
		down []string
		want map[string]float64
	}{
		{nil, map[string]float64{"a": 0.5, "a/a1": 0.5, "b": 0.3, "b/b1": 0.3, "c": 0.2, "c/c1": 0.2}},
		{[]string{"b"}, map[string]float64{"a": 0.5 / 0.7, "a/a1": 0.5 / 0.7, "c": 0.2 / 0.7, "c/c1": 0.2 / 0.7}},
	} {
		t.Run(fmt.Sprint("down", tc.down), func(t *testing.T) {
			w2 := *w
			w2.health = flatHealth{Origins: map[pools.OriginKey]pools.OriginHealth{}}
			for _, p := range tc.down {
				w2.down(p, p+"1")
			}
			s := w2.compile(t)
			lb := s.LoadBalancer("www.glb.example.com")
			got := s.Preview(lb, sample, QTypeA, locator(t, &w2))
			assertFlat(t, "preview", got, tc.want)
			for k, v := range drawn(t, s, lb, sample, locator(t, &w2), 20000) {
				if math.Abs(tc.want[k]-v) > 0.01 {
					t.Errorf("real draws give %s %.4f, the preview %.4f", k, v, tc.want[k])
				}
			}
		})
	}
}

// TestPreviewPlaces: a subnet is located by the operator networks, a
// region or country by the region table, each through geo steering.
func TestPreviewPlaces(t *testing.T) {
	t.Parallel()
	w := threePools()
	l := w.lb("www", []string{"us"}, "fb")
	l.RegionPools = map[string][]string{"WEU": {"eu"}, "NEAS": {"ap"}}
	w.cfg.Networks = []pools.Network{{Meta: pools.Meta{ID: "n"}, CIDR: "198.51.100.0/24", Region: "NEAS"}}
	s := w.compile(t)
	lb := s.LoadBalancer("www.glb.example.com")
	got := s.Preview(lb, []Sample{{Country: "FR"}, {Region: "WEU"}, {Region: "ENAM"}, {Subnet: netip.MustParsePrefix("198.51.100.0/24")}}, QTypeA, locator(t, w))
	assertFlat(t, "geo", got, map[string]float64{"eu": 0.5, "eu/eu1": 0.5, "us": 0.25, "us/us1": 0.25, "ap": 0.25, "ap/ap1": 0.25})
	if got.Pools[0].Name != "eu" {
		t.Errorf("pools not ordered by share: %+v", got.Pools)
	}

	// Proximity: a region's clients sit at its centre.
	p := w.lb("near", []string{"us", "eu", "ap"}, "fb")
	p.SteeringPolicy = pools.SteeringProximity
	s = w.compile(t)
	got = s.Preview(s.LoadBalancer("near.glb.example.com"), []Sample{{Region: "NEAS"}, {Country: "DE"}}, QTypeA, locator(t, w))
	assertFlat(t, "proximity", got, map[string]float64{"ap": 0.5, "ap/ap1": 0.5, "eu": 0.5, "eu/eu1": 0.5})

	for _, bad := range [][2]string{{"MARS", ""}, {"", "ZZ"}, {"ENAM", "FR"}, {"", ""}} {
		if _, ok := Place(bad[0], bad[1]); ok {
			t.Errorf("Place(%q, %q) accepted", bad[0], bad[1])
		}
	}
	if loc, ok := Place("", "FR"); !ok || loc.Region != "WEU" || loc.Zone != "WEU" || loc.Continent != "EU" || !loc.HasCoordinates {
		t.Errorf("Place FR: %+v %v", loc, ok)
	}
}

// TestPreviewHash: hash steering gives a subnet one origin, the one the
// DNS path answers; a place counts by weight.
func TestPreviewHash(t *testing.T) {
	t.Parallel()
	w := newWorld()
	p := w.pool("p", origin{"A", "192.0.2.1", "", 1}, origin{"B", "192.0.2.2", "", 1})
	p.OriginSteering.Policy = pools.OriginHash
	w.lb("www", []string{"p"}, "p")
	s := w.compile(t)
	lb := s.LoadBalancer("www.glb.example.com")
	loc := locator(t, w)
	sub := subnets("198.51.100.0/24")
	_, _, names := decide(t, s, "www.glb.example.com", Request{Subnet: sub[0].Subnet, SourcePrefix: 24, Client: loc.Locate(sub[0].Subnet)}, nil)
	assertFlat(t, "subnet", s.Preview(lb, sub, QTypeA, loc), map[string]float64{"p": 1, "p/" + names[0]: 1})
	assertFlat(t, "place", s.Preview(lb, []Sample{{Region: "WEU"}}, QTypeA, loc), map[string]float64{"p": 1, "p/A": 0.5, "p/B": 0.5})
}

// orderNames reads an order as "pool pool ...".
func orderNames(o CandidateOrder) string {
	var out []string
	for _, p := range o.Pools {
		out = append(out, p.Name)
	}
	return strings.Join(out, " ")
}

// TestPreviewOrders: the preview gives the order of the candidate pools
// each client gets, with its share: nearest first from a region's centre
// under proximity (with the distances), the geo list then the defaults
// under geo, and one order per pool random steering may draw first, by
// its odds. Health does not change an order, only which pool answers.
func TestPreviewOrders(t *testing.T) {
	t.Parallel()
	w := threePools()
	w.lb("near", []string{"us", "eu", "ap"}, "fb").SteeringPolicy = pools.SteeringProximity
	g := w.lb("geo", []string{"us"}, "fb")
	g.RegionPools = map[string][]string{"WEU": {"eu", "ap"}}
	r := w.lb("rnd", []string{"us", "eu"}, "fb")
	r.SteeringPolicy, r.RandomSteering.PoolWeights = pools.SteeringRandom, map[string]float64{"us": 0.25, "eu": 0.75}
	w.down("us", "us1")
	s := w.compile(t)
	loc := locator(t, w)

	near := s.LoadBalancer("near.glb.example.com")
	got := s.Preview(near, []Sample{{Region: "NEAS"}}, QTypeA, loc)
	if len(got.Orders) != 1 || orderNames(got.Orders[0]) != "ap eu us" || got.Orders[0].Share != 1 {
		t.Fatalf("proximity from NEAS: %+v", got.Orders)
	}
	for i, p := range got.Orders[0].Pools {
		if p.DistanceKm == nil || i > 0 && *p.DistanceKm <= *got.Orders[0].Pools[i-1].DistanceKm {
			t.Errorf("proximity from NEAS: distances not given or not increasing: %+v", got.Orders[0].Pools)
		}
	}
	// Three clients in two places: two orders, the larger first; WEU's
	// two clients agree on their distances, so these are kept.
	got = s.Preview(near, []Sample{{Region: "ENAM"}, {Region: "WEU"}, {Country: "FR"}}, QTypeA, loc)
	if len(got.Orders) != 2 || orderNames(got.Orders[0]) != "eu us ap" || orderNames(got.Orders[1]) != "us eu ap" ||
		math.Abs(got.Orders[0].Share-2.0/3) > 1e-9 || math.Abs(got.Orders[1].Share-1.0/3) > 1e-9 {
		t.Fatalf("proximity from ENAM, WEU and FR: %+v", got.Orders)
	}
	// Subnets located nowhere have no coordinates: configured order, no distance.
	got = s.Preview(near, subnets("203.0.113.0/24"), QTypeA, loc)
	if len(got.Orders) != 1 || orderNames(got.Orders[0]) != "us eu ap" || got.Orders[0].Pools[0].DistanceKm != nil {
		t.Fatalf("proximity from nowhere: %+v", got.Orders)
	}
	// Paris and Berlin share an order but not a distance: none is given.
	w2 := *w
	w2.cfg.Networks = []pools.Network{{Meta: pools.Meta{ID: "paris"}, CIDR: "198.51.100.0/24", Latitude: ptr(48.9), Longitude: ptr(2.3)},
		{Meta: pools.Meta{ID: "berlin"}, CIDR: "198.51.101.0/24", Latitude: ptr(52.5), Longitude: ptr(13.4)}}
	got = s.Preview(near, subnets("198.51.100.0/24", "198.51.101.0/24"), QTypeA, locator(t, &w2))
	if len(got.Orders) != 1 || orderNames(got.Orders[0]) != "eu us ap" || got.Orders[0].Pools[0].DistanceKm != nil {
		t.Fatalf("proximity from Paris and Berlin: %+v", got.Orders)
	}
	got = s.Preview(near, subnets("198.51.100.0/24", "198.51.100.0/25"), QTypeA, locator(t, &w2))
	if len(got.Orders) != 1 || got.Orders[0].Pools[0].DistanceKm == nil {
		t.Fatalf("proximity from Paris twice: %+v", got.Orders)
	}

	// Dynamic latency: WEU's clients by the RTT measured from WEU.
	w.lb("fast", []string{"us", "eu", "ap"}, "fb").SteeringPolicy = pools.SteeringDynamicLatency
	w.health.RTT = map[pools.PoolRegion]time.Duration{{Pool: "us", Region: "WEU"}: 80 * time.Millisecond,
		{Pool: "eu", Region: "WEU"}: 5 * time.Millisecond, {Pool: "ap", Region: "WEU"}: 200 * time.Millisecond}
	s = w.compile(t)
	got = s.Preview(s.LoadBalancer("fast.glb.example.com"), []Sample{{Region: "WEU"}}, QTypeA, loc)
	if len(got.Orders) != 1 || orderNames(got.Orders[0]) != "eu us ap" || got.Orders[0].Pools[0].RTTMs == nil || *got.Orders[0].Pools[0].RTTMs != 5 {
		t.Fatalf("dynamic latency from WEU: %+v", got.Orders)
	}

	got = s.Preview(s.LoadBalancer("geo.glb.example.com"), []Sample{{Region: "WEU"}}, QTypeA, loc)
	if len(got.Orders) != 1 || orderNames(got.Orders[0]) != "eu ap us" ||
		got.Orders[0].Pools[0].Source != "region_pools.WEU" || got.Orders[0].Pools[2].Source != "default_pools" {
		t.Fatalf("geo from WEU: %+v", got.Orders)
	}

	// us is down: random steering draws only eu first, so one order.
	got = s.Preview(s.LoadBalancer("rnd.glb.example.com"), []Sample{{Region: "WEU"}}, QTypeA, loc)
	if len(got.Orders) != 1 || orderNames(got.Orders[0]) != "eu us" {
		t.Fatalf("random with us down: %+v", got.Orders)
	}
	delete(w.health.Origins, pools.OriginKey{Pool: "us", Origin: "us1"})
	s = w.compile(t)
	got = s.Preview(s.LoadBalancer("rnd.glb.example.com"), []Sample{{Region: "WEU"}}, QTypeA, loc)
	if len(got.Orders) != 2 || orderNames(got.Orders[0]) != "eu us" || got.Orders[0].Share != 0.75 ||
		orderNames(got.Orders[1]) != "us eu" || got.Orders[1].Share != 0.25 {
		t.Fatalf("random: %+v", got.Orders)
	}
}
