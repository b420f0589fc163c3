package steering

import (
	"math"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/glb-dns/glb/geodata"
	"github.com/glb-dns/glb/pools"
)

func ptr[T any](v T) *T { return &v }

// threePools: pools "us", "eu", "ap" with one origin each and coordinates.
func threePools() *world {
	w := newWorld()
	us := w.pool("us", origin{"us1", "192.0.2.1", "", 1})
	us.Latitude, us.Longitude = ptr(38.9), ptr(-77.0) // Washington
	eu := w.pool("eu", origin{"eu1", "192.0.2.2", "", 1})
	eu.Latitude, eu.Longitude = ptr(50.1), ptr(8.7) // Frankfurt
	ap := w.pool("ap", origin{"ap1", "192.0.2.3", "", 1})
	ap.Latitude, ap.Longitude = ptr(35.7), ptr(139.7) // Tokyo
	w.pool("fb", origin{"fb1", "192.0.2.9", "", 1})
	return w
}

func candidateIDs(tr Trace) []string {
	out := []string{}
	for _, c := range tr.Candidates {
		out = append(out, c.ID)
	}
	return out
}

func TestPolicyOff(t *testing.T) {
	t.Parallel()
	w := threePools()
	w.lb("www", []string{"eu", "us", "ap"}, "fb").SteeringPolicy = pools.SteeringOff
	s := w.compile(t)
	_, tr, got := decide(t, s, "www.glb.example.com", Request{Client: geodata.Location{Country: "US", Region: "ENAM", Prefix: 16}}, nil)
	if !slices.Equal(got, []string{"eu1"}) || !slices.Equal(candidateIDs(tr), []string{"eu", "us", "ap"}) {
		t.Errorf("off: got %v candidates %v, want eu1 from [eu us ap]", got, candidateIDs(tr))
	}
	w.down("eu", "eu1")
	_, tr, got = decide(t, w.compile(t), "www.glb.example.com", Request{}, nil)
	if !slices.Equal(got, []string{"us1"}) || tr.Candidates[0].Reason == "" || !tr.Candidates[1].Chosen {
		t.Errorf("off with eu down: got %v, trace %+v", got, tr.Candidates)
	}
}

func TestPolicyGeo(t *testing.T) {
	t.Parallel()
	w := threePools()
	l := w.lb("www", []string{"us"}, "fb") // empty policy + geo map = geo
	l.CountryPools = map[string][]string{"JP": {"ap"}}
	l.RegionPools = map[string][]string{"WEU": {"eu"}, "NEAS": {"us"}}
	s := w.compile(t)
	if s.LoadBalancer("www.glb.example.com").Policy() != pools.SteeringGeo {
		t.Fatalf("empty policy with a geo map should resolve to geo")
	}
	cases := []struct {
		loc  geodata.Location
		want string
		src  string
	}{
		{geodata.Location{Country: "JP", Region: "NEAS", Prefix: 16}, "ap1", "country_pools.JP"},
		{geodata.Location{Country: "DE", Region: "WEU", Prefix: 16}, "eu1", "region_pools.WEU"},
		{geodata.Location{Country: "BR", Region: "SSAM", Prefix: 16}, "us1", "default_pools"},
		{geodata.Location{Prefix: -1}, "us1", "default_pools"},
	}
	for _, c := range cases {
		ans, tr, got := decide(t, s, "www.glb.example.com", Request{Client: c.loc, SourcePrefix: 24}, nil)
		if !slices.Equal(got, []string{c.want}) || tr.Candidates[0].Source != c.src {
			t.Errorf("%+v: got %v from %s, want %s from %s", c.loc, got, tr.Candidates[0].Source, c.want, c.src)
		}
		if !ans.LocationDependent {
			t.Errorf("geo answers depend on location")
		}
	}
	// The geo list unhealthy: continue with default_pools.
	w.down("ap", "ap1")
	_, tr, got := decide(t, w.compile(t), "www.glb.example.com", Request{Client: geodata.Location{Country: "JP", Region: "NEAS"}}, nil)
	if !slices.Equal(got, []string{"us1"}) || tr.Pool.Fallback || !slices.Equal(candidateIDs(tr), []string{"ap", "us"}) {
		t.Errorf("geo list down: got %v candidates %v fallback %v; want us1 from default_pools", got, candidateIDs(tr), tr.Pool.Fallback)
	}
	// A plain "off" policy ignores the geo map.
	if s := func() *Snapshot { l.SteeringPolicy = pools.SteeringOff; return w.compile(t) }(); s.LoadBalancer("www.glb.example.com").Policy() != pools.SteeringOff {
		t.Errorf("explicit off must stay off")
	}
}

func TestPolicyProximity(t *testing.T) {
	t.Parallel()
	w := threePools()
	w.pool("nocoords", origin{"nc1", "192.0.2.4", "", 1})
	w.lb("www", []string{"nocoords", "us", "eu", "ap"}, "fb").SteeringPolicy = pools.SteeringProximity
	s := w.compile(t)
	paris := geodata.Location{Country: "FR", Latitude: 48.85, Longitude: 2.35, HasCoordinates: true, Prefix: 20}
	_, tr, got := decide(t, s, "www.glb.example.com", Request{Client: paris}, nil)
	if !slices.Equal(got, []string{"eu1"}) || !slices.Equal(candidateIDs(tr), []string{"eu", "us", "ap", "nocoords"}) {
		t.Errorf("Paris: got %v order %v, want eu1 and [eu us ap nocoords]", got, candidateIDs(tr))
	}
	if d := tr.Candidates[0].DistanceKm; d == nil || math.Abs(*d-479) > 15 {
		t.Errorf("Paris-Frankfurt distance %v, want about 479 km", d)
	}
	// No coordinates: configured order.
	_, tr, got = decide(t, s, "www.glb.example.com", Request{Client: geodata.Location{Country: "FR", Prefix: 20}}, nil)
	if !slices.Equal(got, []string{"nc1"}) || !slices.Equal(candidateIDs(tr), []string{"nocoords", "us", "eu", "ap"}) {
		t.Errorf("no coordinates: got %v order %v, want configured order", got, candidateIDs(tr))
	}
}

func TestPolicyDynamicLatency(t *testing.T) {
	t.Parallel()
	w := threePools()
	w.lb("www", []string{"us", "eu", "ap"}, "fb").SteeringPolicy = pools.SteeringDynamicLatency
	weu := geodata.Location{Region: "WEU", Prefix: 16}
	// No RTT data: configured order.
	if _, tr, got := decide(t, w.compile(t), "www.glb.example.com", Request{Client: weu}, nil); !slices.Equal(got, []string{"us1"}) || !slices.Equal(candidateIDs(tr), []string{"us", "eu", "ap"}) {
		t.Errorf("no data: got %v order %v", got, candidateIDs(tr))
	}
	w.health.RTT = map[pools.PoolRegion]time.Duration{
		{Pool: "us", Region: "WEU"}:  90 * time.Millisecond,
		{Pool: "eu", Region: "WEU"}:  10 * time.Millisecond,
		{Pool: "ap", Region: "NEAS"}: 5 * time.Millisecond,
	}
	s := w.compile(t)
	_, tr, got := decide(t, s, "www.glb.example.com", Request{Client: weu}, nil)
	if !slices.Equal(got, []string{"eu1"}) || !slices.Equal(candidateIDs(tr), []string{"eu", "us", "ap"}) {
		t.Errorf("WEU client: got %v order %v, want eu first, pool without WEU data last", got, candidateIDs(tr))
	}
	// EEU has no data: the nearest region with data (WEU) ranks the pools.
	if _, _, got := decide(t, s, "www.glb.example.com", Request{Client: geodata.Location{Region: "EEU", Prefix: 16}}, nil); !slices.Equal(got, []string{"eu1"}) {
		t.Errorf("EEU client: got %v, want eu1 via nearest region WEU", got)
	}
	// SEAS is nearest to NEAS, where only ap has data.
	if _, _, got := decide(t, s, "www.glb.example.com", Request{Client: geodata.Location{Region: "SEAS", Prefix: 16}}, nil); !slices.Equal(got, []string{"ap1"}) {
		t.Errorf("SEAS client: got %v, want ap1 via nearest region NEAS", got)
	}
}

func TestPolicyRandom(t *testing.T) {
	t.Parallel()
	w := threePools()
	l := w.lb("www", []string{"us", "eu", "ap"}, "fb")
	l.SteeringPolicy = pools.SteeringRandom
	l.RandomSteering = pools.RandomSteering{DefaultWeight: 0.5, PoolWeights: map[string]float64{"us": 0.2, "ap": 0.3}}
	share := func(s *Snapshot) map[string]float64 {
		c := map[string]float64{}
		const n = 100_000
		decideN(s, "www.glb.example.com", Request{Type: QTypeA, SourcePrefix: -1}, rand.New(rand.NewPCG(3, 4)), n, func(ans *Answer) {
			c[s.PoolID(ans.Pool)] += 1.0 / n
		})
		return c
	}
	got := share(w.compile(t))
	for id, want := range map[string]float64{"us": 0.2, "eu": 0.5, "ap": 0.3} {
		if math.Abs(got[id]-want) > 0.01 {
			t.Errorf("pool %s chosen %.3f, want %.2f", id, got[id], want)
		}
	}
	// An unhealthy pool's share goes to the others in proportion.
	w.down("eu", "eu1")
	got = share(w.compile(t))
	for id, want := range map[string]float64{"us": 0.4, "eu": 0, "ap": 0.6} {
		if math.Abs(got[id]-want) > 0.01 {
			t.Errorf("eu down: pool %s chosen %.3f, want %.2f", id, got[id], want)
		}
	}
}

func TestFallbackAndFailOpen(t *testing.T) {
	t.Parallel()
	w := newWorld()
	p := w.pool("p", origin{"a", "192.0.2.1", "", 1}, origin{"b", "192.0.2.2", "", 1}, origin{"c", "192.0.2.3", "", 1})
	p.MinimumOrigins = 2
	w.pool("fb", origin{"f1", "192.0.2.8", "", 1}, origin{"f2", "192.0.2.9", "", 1})
	w.lb("www", []string{"p"}, "fb").Answers = 0
	// One down: 2 healthy >= minimum 2, pool serves its healthy origins.
	w.down("p", "a")
	if ans, _, got := decide(t, w.compile(t), "www.glb.example.com", Request{}, nil); !slices.Equal(got, []string{"b", "c"}) || ans.Fallback {
		t.Errorf("2 of 3 healthy with minimum 2: got %v fallback %v", got, ans.Fallback)
	}
	// Two down: below minimum, the fallback pool answers.
	w.down("p", "b")
	if ans, _, got := decide(t, w.compile(t), "www.glb.example.com", Request{}, nil); !slices.Equal(got, []string{"f1", "f2"}) || !ans.Fallback || ans.FailOpen {
		t.Errorf("below minimum: got %v fallback %v failopen %v", got, ans.Fallback, ans.FailOpen)
	}
	// Fallback partly down: its healthy origins.
	w.down("fb", "f1")
	if ans, _, got := decide(t, w.compile(t), "www.glb.example.com", Request{}, nil); !slices.Equal(got, []string{"f2"}) || ans.FailOpen {
		t.Errorf("fallback partly down: got %v failopen %v", got, ans.FailOpen)
	}
	// Fallback wholly down: fail open on all its enabled origins.
	w.down("fb", "f2")
	ans, tr, got := decide(t, w.compile(t), "www.glb.example.com", Request{}, nil)
	if !slices.Equal(got, []string{"f1", "f2"}) || !ans.Fallback || !ans.FailOpen || !tr.Pool.FailOpen {
		t.Errorf("fallback down: got %v fallback %v failopen %v", got, ans.Fallback, ans.FailOpen)
	}
}

func TestDisabledPoolAndOriginsSkipped(t *testing.T) {
	t.Parallel()
	w := newWorld()
	w.pool("off", origin{"x", "192.0.2.1", "", 1}).Enabled = false
	p := w.pool("on", origin{"a", "192.0.2.2", "", 1}, origin{"b", "192.0.2.3", "", 1})
	p.Origins[1].Enabled = false
	w.lb("www", []string{"off", "on"}, "on").Answers = 0
	_, tr, got := decide(t, w.compile(t), "www.glb.example.com", Request{}, nil)
	if !slices.Equal(got, []string{"a"}) || tr.Candidates[0].Reason != "pool disabled" {
		t.Errorf("got %v, first candidate reason %q", got, tr.Candidates[0].Reason)
	}
}

func TestPoolWithoutMonitorIgnoresHealth(t *testing.T) {
	t.Parallel()
	w := newWorld()
	w.pool("p", origin{"a", "192.0.2.1", "", 1}).Monitor = ""
	w.pool("fb", origin{"f", "192.0.2.2", "", 1})
	w.lb("www", []string{"p"}, "fb")
	w.down("p", "a") // stale entry from when it had a monitor
	if _, _, got := decide(t, w.compile(t), "www.glb.example.com", Request{}, nil); !slices.Equal(got, []string{"a"}) {
		t.Errorf("pool without monitor: got %v, want a (always healthy)", got)
	}
}

func TestFamiliesAndCNAME(t *testing.T) {
	t.Parallel()
	w := newWorld()
	w.pool("mixed", origin{"v4", "192.0.2.1", "", 1}, origin{"v6", "2001:db8::1", "", 1})
	w.pool("v4only", origin{"v4", "192.0.2.1", "", 1})
	w.pool("host", origin{"h", "Origin.Example.NET.", "", 1})
	w.lb("mixed", []string{"mixed"}, "mixed").Answers = 0
	w.lb("v4only", []string{"v4only"}, "v4only")
	w.lb("host", []string{"host"}, "host")
	s := w.compile(t)
	if _, _, got := decide(t, s, "mixed.glb.example.com", Request{Type: QTypeA}, nil); !slices.Equal(got, []string{"v4"}) {
		t.Errorf("A: got %v", got)
	}
	if _, _, got := decide(t, s, "mixed.glb.example.com", Request{Type: QTypeAAAA}, nil); !slices.Equal(got, []string{"v6"}) {
		t.Errorf("AAAA: got %v", got)
	}
	if ans, _, _ := decide(t, s, "v4only.glb.example.com", Request{Type: QTypeAAAA}, nil); ans.N != 0 || ans.Scope != 0 {
		t.Errorf("AAAA of a v4-only pool: %d records scope %d, want NODATA with scope 0", ans.N, ans.Scope)
	}
	for _, q := range []QType{QTypeA, QTypeAAAA, QTypeOther} {
		ans, tr, _ := decide(t, s, "host.glb.example.com", Request{Type: q}, nil)
		if ans.N != 1 || !ans.CNAME || s.Origin(ans.Origins[0]).Host != "origin.example.net." || tr.Records[0].Type != "CNAME" {
			t.Errorf("%v of a hostname origin: %+v, want one CNAME to origin.example.net.", q, ans.Records())
		}
	}
	if ans, _, _ := decide(t, s, "mixed.glb.example.com", Request{Type: QTypeOther}, nil); ans.N != 0 {
		t.Errorf("TXT of an address pool: %d records, want none", ans.N)
	}
}

func TestHashSteeringStable(t *testing.T) {
	t.Parallel()
	build := func(drop string) *Snapshot {
		w := newWorld()
		var os []origin
		for _, n := range []string{"a", "b", "c", "d"} {
			if n != drop {
				os = append(os, origin{n, "192.0.2." + string(rune('1'+n[0]-'a')), "", map[string]float64{"a": 0.4, "b": 0.2, "c": 0.2, "d": 0.2}[n]})
			}
		}
		w.pool("p", os...).OriginSteering.Policy = pools.OriginHash
		w.lb("www", []string{"p"}, "p")
		return w.compile(t)
	}
	s1, s2, sDrop := build(""), build(""), build("d")
	rnd := rand.New(rand.NewPCG(9, 9))
	counts := map[string]int{}
	moved := 0
	const n = 20_000
	for i := range n {
		subnet := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 0}), 24)
		req := Request{Subnet: subnet, SourcePrefix: 24, Client: geodata.Location{Prefix: -1}}
		a1, _, g1 := decide(t, s1, "www.glb.example.com", req, rnd)
		_, _, g2 := decide(t, s2, "www.glb.example.com", req, rnd)
		_, _, g3 := decide(t, s1, "www.glb.example.com", req, rnd)
		if !slices.Equal(g1, g2) || !slices.Equal(g1, g3) {
			t.Fatalf("subnet %s: %v, %v, %v: not stable across calls and snapshots", subnet, g1, g3, g2)
		}
		if a1.Scope != 24 || !a1.LocationDependent {
			t.Fatalf("hash answer scope %d dependent %v, want 24 true", a1.Scope, a1.LocationDependent)
		}
		counts[g1[0]]++
		_, _, gd := decide(t, sDrop, "www.glb.example.com", req, rnd)
		if g1[0] != "d" && gd[0] != g1[0] {
			moved++
		}
	}
	for name, want := range map[string]float64{"a": 0.4, "b": 0.2, "c": 0.2, "d": 0.2} {
		if got := float64(counts[name]) / n; math.Abs(got-want) > 0.02 {
			t.Errorf("hash share of %s = %.3f, want %.2f", name, got, want)
		}
	}
	if moved != 0 {
		t.Errorf("removing d moved %d subnets that were not on d", moved)
	}
}

func TestECSScope(t *testing.T) {
	t.Parallel()
	w := threePools()
	w.lb("off", []string{"us"}, "fb").SteeringPolicy = pools.SteeringOff
	g := w.lb("geo", []string{"us"}, "fb")
	g.RegionPools = map[string][]string{"WEU": {"eu"}}
	za := w.lb("zonal", []string{"us"}, "fb")
	za.SteeringPolicy = pools.SteeringOff
	za.ZonalAffinity.Spillover = pools.AffinitySpillCrossZone
	s := w.compile(t)
	cases := []struct {
		lb     string
		client geodata.Location
		source int
		want   int
	}{
		{"off", geodata.Location{Region: "WEU", Prefix: 16}, 24, 0},
		{"geo", geodata.Location{Region: "WEU", Prefix: 16}, 24, 16},
		{"geo", geodata.Location{Region: "WEU", Prefix: 20}, 20, 20},
		{"geo", geodata.Location{Prefix: -1}, 24, 24},
		{"zonal", geodata.Location{Zone: "WEU", Region: "WEU", Prefix: 12}, 24, 12},
		{"geo", geodata.Location{Region: "WEU", Prefix: 16}, -1, 0},
	}
	for _, c := range cases {
		ans, tr, _ := decide(t, s, c.lb+".glb.example.com", Request{Client: c.client, SourcePrefix: c.source}, nil)
		if ans.Scope != c.want || tr.ECSScope != c.want {
			t.Errorf("%s %+v source /%d: scope %d, want %d", c.lb, c.client, c.source, ans.Scope, c.want)
		}
	}
}

func TestCompileRejectsDanglingReferences(t *testing.T) {
	t.Parallel()
	w := newWorld()
	w.pool("p", origin{"a", "192.0.2.1", "", 1})
	w.lb("www", []string{"p", "missing"}, "p")
	if _, err := Compile(&w.cfg, nil); err == nil {
		t.Errorf("compile accepted a load balancer naming a missing pool")
	}
}

func TestDisabledLoadBalancerNotServed(t *testing.T) {
	t.Parallel()
	w := newWorld()
	w.pool("p", origin{"a", "192.0.2.1", "", 1})
	w.lb("www", []string{"p"}, "p").Enabled = false
	if s := w.compile(t); s.LoadBalancer("www.glb.example.com") != nil {
		t.Errorf("a disabled load balancer is served")
	}
}

// placeAll locates every client in one place, reporting the prefix it
// was asked about.
type placeAll struct{ asked *netip.Prefix }

func (p placeAll) Locate(c netip.Prefix) geodata.Location {
	*p.asked = c
	return geodata.Location{Region: "WEU", Prefix: c.Bits()}
}

// TestFillRequest: the query context DNS, explain and the preview share.
func TestFillRequest(t *testing.T) {
	t.Parallel()
	w := threePools()
	w.lb("always", []string{"us"}, "fb").LocationStrategy.PreferECS = pools.PreferECSAlways
	w.lb("never", []string{"us"}, "fb").LocationStrategy.PreferECS = pools.PreferECSNever
	s := w.compile(t)
	always, never := s.LoadBalancer("always.glb.example.com"), s.LoadBalancer("never.glb.example.com")
	src := netip.MustParseAddr("192.0.2.53")
	ecs := netip.MustParsePrefix("198.51.100.0/24")
	var asked netip.Prefix
	loc := placeAll{&asked}
	byResolver := netip.MustParsePrefix("192.0.2.53/32")

	req, at := always.fillRequest(src, ecs, QTypeAAAA, loc)
	if at != ecs || asked != ecs || req.Subnet != ecs || req.SourcePrefix != 24 || req.Type != QTypeAAAA || req.Client.Region != "WEU" {
		t.Errorf("always: located by %v (asked %v), %+v; want the ECS subnet", at, asked, req)
	}
	// Host bits past the source prefix do not move the client.
	if req, at = always.fillRequest(src, netip.MustParsePrefix("198.51.100.77/24"), QTypeA, loc); at != ecs || req.Subnet != ecs {
		t.Errorf("unmasked ECS: located by %v, subnet %v; want %v", at, req.Subnet, ecs)
	}
	req, at = never.fillRequest(src, ecs, QTypeA, loc)
	if at != byResolver || asked != at || req.Subnet != netip.MustParsePrefix("192.0.2.0/24") || req.SourcePrefix != -1 {
		t.Errorf("never: located by %v, %+v; want the resolver address and /24, no source prefix", at, req)
	}
	// Source prefix 0: the client opted out, the resolver locates it.
	req, at = always.fillRequest(src, netip.MustParsePrefix("0.0.0.0/0"), QTypeA, loc)
	if at != byResolver || asked != at || req.SourcePrefix != -1 || req.Subnet != netip.MustParsePrefix("192.0.2.0/24") {
		t.Errorf("ECS /0: located by %v, %+v; want the resolver address, no source prefix", at, req)
	}
	req, _ = never.fillRequest(netip.MustParseAddr("2001:db8:1:2ff::1"), netip.Prefix{}, QTypeA, loc)
	if req.Subnet != netip.MustParsePrefix("2001:db8:1:200::/56") {
		t.Errorf("IPv6 hash subnet %v, want /56", req.Subnet)
	}
	req, _ = never.fillRequest(netip.MustParseAddr("::ffff:192.0.2.53"), netip.Prefix{}, QTypeA, loc)
	if asked != byResolver {
		t.Errorf("an IPv4-mapped resolver is located as %v, want %v", asked, byResolver)
	}
	// Without a locator, or without an address, the client is unknown.
	if req, _ = always.fillRequest(src, ecs, QTypeA, nil); req.Client != (geodata.Location{Prefix: -1}) {
		t.Errorf("no locator: client %+v, want unknown", req.Client)
	}
	asked = netip.Prefix{}
	if req, _ = never.fillRequest(netip.Addr{}, netip.Prefix{}, QTypeA, loc); asked.IsValid() || req.Client != (geodata.Location{Prefix: -1}) {
		t.Errorf("no address: asked %v, client %+v; want no lookup, unknown", asked, req.Client)
	}
}

// fillRequest is FillRequest returning the request, for table tests.
func (l *LB) fillRequest(src netip.Addr, ecs netip.Prefix, qtype QType, loc Locator) (Request, netip.Prefix) {
	var req Request
	at := l.FillRequest(&req, src, ecs, qtype, loc)
	return req, at
}

// TestAutoECSFollowsThePolicy: prefer_ecs auto, the default, uses the ECS
// subnet exactly when the answer depends on where the client is; the
// older values keep their meaning.
func TestAutoECSFollowsThePolicy(t *testing.T) {
	t.Parallel()
	w := threePools()
	for _, c := range []struct {
		name   string
		policy pools.SteeringPolicy
		geo    bool
		zonal  bool
		prefer pools.PreferECS
		want   bool
	}{
		{"geo-map", pools.SteeringDefault, true, false, pools.PreferECSAuto, true},
		{"geo", pools.SteeringGeo, true, false, pools.PreferECSAuto, true},
		{"proximity", pools.SteeringProximity, false, false, pools.PreferECSAuto, true},
		{"latency", pools.SteeringDynamicLatency, false, false, pools.PreferECSAuto, true},
		{"zonal", pools.SteeringOff, false, true, pools.PreferECSAuto, true},
		{"off", pools.SteeringOff, false, false, pools.PreferECSAuto, false},
		{"random", pools.SteeringRandom, false, false, pools.PreferECSAuto, false},
		{"geo-kept-proximity", pools.SteeringGeo, true, false, pools.PreferECSProximity, false},
		{"geo-geo", pools.SteeringGeo, true, false, pools.PreferECSGeo, true},
	} {
		l := w.lb(c.name, []string{"us"}, "fb")
		if l.LocationStrategy.PreferECS != pools.PreferECSAuto {
			t.Fatalf("default prefer_ecs %q, want auto", l.LocationStrategy.PreferECS)
		}
		l.SteeringPolicy, l.LocationStrategy.PreferECS = c.policy, c.prefer
		if c.geo {
			l.CountryPools = map[string][]string{"GB": {"eu"}}
		}
		if c.zonal {
			l.ZonalAffinity.Spillover = pools.AffinityStayWithinZone
		}
	}
	s := w.compile(t)
	for _, name := range []string{"geo-map", "geo", "proximity", "latency", "zonal", "geo-geo"} {
		if !s.LoadBalancer(name + ".glb.example.com").UseECS() {
			t.Errorf("%s: the ECS subnet is not used", name)
		}
	}
	for _, name := range []string{"off", "random", "geo-kept-proximity"} {
		if s.LoadBalancer(name + ".glb.example.com").UseECS() {
			t.Errorf("%s: the ECS subnet is used", name)
		}
	}
}
