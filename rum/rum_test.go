package rum

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/glb-dns/glb/geodata"
	"github.com/glb-dns/glb/pools"
)

var (
	netA = netip.MustParsePrefix("198.51.100.0/24")
	netB = netip.MustParsePrefix("203.0.113.0/24")
)

// Addresses are cut to their network before anything is kept.
func TestNetworkCutsAddresses(t *testing.T) {
	for in, want := range map[string]string{"198.51.100.77": "198.51.100.0/24", "::ffff:192.0.2.9": "192.0.2.0/24", "2001:db8:1:2::5": "2001:db8:1::/48"} {
		if got := Network(netip.MustParseAddr(in)); got.String() != want {
			t.Errorf("Network(%s) = %s, want %s", in, got, want)
		}
	}
}

// A network over its rate is refused; another network is not touched
// by the first one's flood.
func TestCollectorRateLimitPerNetwork(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	c := NewCollector(60, func() time.Time { return now })
	accepted := 0
	for range 200 {
		if c.Add(netA, "", []Measurement{{"p", 5}}) == nil {
			accepted++
		}
	}
	if accepted != 20 { // the burst: 60/3
		t.Errorf("flood accepted %d, want the burst of 20", accepted)
	}
	if err := c.Add(netB, "", []Measurement{{"p", 50}}); err != nil {
		t.Errorf("another network refused after a flood: %v", err)
	}
	now = now.Add(10 * time.Second) // refills 10 tokens
	accepted = 0
	for range 50 {
		if c.Add(netA, "", []Measurement{{"p", 5}}) == nil {
			accepted++
		}
	}
	if accepted != 10 {
		t.Errorf("after 10 s accepted %d, want 10", accepted)
	}
	rows := c.Rows()
	got := map[netip.Prefix]int32{}
	for _, r := range rows {
		for _, n := range r.Counts {
			got[r.Network] += n
		}
	}
	if got[netA] != 30 || got[netB] != 1 {
		t.Errorf("samples kept %v", got)
	}
}

// Medians come from the histogram within its resolution; a network's
// weight in its country is capped; a resolver's figures are its
// networks'.
func TestBuild(t *testing.T) {
	h := func(ms float64, n int) []int32 {
		c := make([]int32, pools.RUMHistogramBuckets)
		c[bucketOf(ms)] = int32(n)
		return c
	}
	samples := []pools.RUMSamples{
		{Network: netA, Pool: "fast", Counts: h(20, 30)}, {Network: netA, Pool: "slow", Counts: h(200, 30)},
		// A flooding network of the same country measured the other way,
		// a thousand times.
		{Network: netB, Pool: "fast", Counts: h(900, 1000)}, {Network: netB, Pool: "slow", Counts: h(10, 1000)},
	}
	fr := func(netip.Prefix) geodata.Location { return geodata.Location{Country: "FR", Region: "WEU"} }
	links := []pools.RUMResolverLink{{Resolver: netip.MustParsePrefix("192.0.2.0/24"), Network: netA, Reports: 3}}
	m := Build(samples, links, fr, 15*time.Minute, time.Unix(0, 0))
	if len(m.Networks) != 2 || m.Networks[0].Prefix != netA {
		t.Fatalf("networks %+v", m.Networks)
	}
	fast := m.Networks[0].Pools[0]
	if fast.Pool != "fast" || fast.Samples != 30 || fast.MedianMs < 18.4 || fast.MedianMs > 21.8 {
		t.Errorf("fast at netA: %+v, want about 20 ms of 30 samples", fast)
	}
	c := m.Countries[0]
	if c.Key != "FR" || c.Pools[0].Samples != 30+NetworkCap {
		t.Errorf("country %+v, want each network capped at %d", c, NetworkCap)
	}
	if len(m.Resolvers) != 1 || m.Resolvers[0].Pools[0].MedianMs > 22 || m.Resolvers[0].Behind[0].Network != netA {
		t.Errorf("resolver %+v", m.Resolvers)
	}
}

// The ring hands over what DNS saw, resolvers cut to their network, and
// survives writers racing the drainer.
func TestTokensRing(t *testing.T) {
	r := NewTokens(64)
	r.See([]byte("abcdefgh12"), netip.MustParseAddr("192.0.2.77"), 5)
	r.See([]byte("BAD"), netip.MustParseAddr("192.0.2.77"), 5)
	got := r.Drain()
	if len(got) != 1 || got[0].Token != "abcdefgh12" || got[0].Resolver.String() != "192.0.2.0/24" {
		t.Fatalf("drained %+v", got)
	}
	if n := testing.AllocsPerRun(100, func() { r.See([]byte("abcdefgh12"), netip.MustParseAddr("192.0.2.1"), 1) }); n != 0 {
		t.Errorf("See allocates %.1f", n)
	}
	r.Drain()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				r.See([]byte("token"+strings.Repeat(string(rune('a'+g)), 5)), netip.MustParseAddr("2001:db8::1"), 1)
			}
		}()
	}
	seen := 0
	for range 50 {
		for _, tk := range r.Drain() {
			if len(tk.Token) != 10 || tk.Resolver.String() != "2001:db8::/48" {
				t.Fatalf("torn token %+v", tk)
			}
			seen++
		}
	}
	wg.Wait()
	seen += len(r.Drain())
	if seen == 0 || seen > 4000 {
		t.Errorf("drained %d of 4000", seen)
	}
}

func testConfig() *pools.Config {
	cfg := pools.NewConfig()
	cfg.Zones = []pools.Zone{{Meta: pools.Meta{ID: "z"}, Name: "glb.example.com"}}
	cfg.Pools = []pools.Pool{{Meta: pools.Meta{ID: "p1"}, RUM: &pools.PoolRUM{ProbeURL: "http://127.0.0.1:1/a.gif"}}, {Meta: pools.Meta{ID: "p2"}}}
	cfg.LoadBalancers = []pools.LoadBalancer{{Meta: pools.Meta{ID: "l"}, Zone: "z", DefaultPools: []string{"p1", "p2"},
		RUM: &pools.LoadBalancerRUM{SiteKeys: []string{"site-key-1"}, AllowedOrigins: []string{"https://www.example.com"}}}}
	return cfg
}

// Reports are checked field by field; the beacon carries the site's
// pools and zone; a trusted proxy names the client.
func TestHandler(t *testing.T) {
	cfg := testConfig()
	c := NewCollector(600, nil)
	h := &Handler{Config: func() *pools.Config { return cfg }, Collector: c, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	post := func(body, origin, xff string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/rum/v1/report", strings.NewReader(body))
		r.RemoteAddr = "127.0.0.1:5555"
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		if xff != "" {
			r.Header.Set("X-Forwarded-For", xff)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	for _, tc := range []struct {
		body, origin string
		code         int
		field        string
	}{
		{`{"key":"site-key-1","m":[{"p":"p1","ms":12}]}`, "https://www.example.com", 204, ""},
		{`{"key":"nope-nope-1","m":[{"p":"p1","ms":12}]}`, "", 403, "key"},
		{`{"key":"site-key-1","m":[{"p":"p1","ms":12}]}`, "https://evil.example.com", 403, "Origin"},
		{`{"key":"site-key-1","m":[{"p":"p2","ms":12}]}`, "", 400, "m[0].p"},
		{`{"key":"site-key-1","m":[{"p":"p1","ms":-1}]}`, "", 400, "m[0].ms"},
		{`{"key":"site-key-1","m":[{"p":"p1","ms":99999999}]}`, "", 400, "m[0].ms"},
		{`{"key":"site-key-1","m":[]}`, "", 400, "m"},
		{`{"key":"site-key-1","token":"x!","m":[{"p":"p1","ms":1}]}`, "", 400, "token"},
		{`{"key":"site-key-1","m":[{"p":"p1","ms":1}],"pad":"` + strings.Repeat("x", 5000) + `"}`, "", 413, "body"},
	} {
		w := post(tc.body, tc.origin, "")
		if w.Code != tc.code || tc.field != "" && !strings.Contains(w.Body.String(), `"field":"`+tc.field+`"`) {
			t.Errorf("%.60s: %d %s, want %d naming %s", tc.body, w.Code, w.Body, tc.code, tc.field)
		}
	}
	if w := post(`{"key":"site-key-1","token":"abcdefgh99","m":[{"p":"p1","ms":12}]}`, "", "198.51.100.9, 127.0.0.1"); w.Code != 204 {
		t.Fatalf("forwarded report: %d", w.Code)
	}
	nets := map[string]bool{}
	for _, r := range c.Rows() {
		nets[r.Network.String()] = true
	}
	if !nets["198.51.100.0/24"] || !nets["127.0.0.0/24"] || len(nets) != 2 {
		t.Errorf("networks kept %v, want the forwarded client's and the direct one's", nets)
	}
	if tk := c.Tokens(); len(tk) != 1 || tk[0].Network != netA {
		t.Errorf("tokens %+v", tk)
	}
	r := httptest.NewRequest(http.MethodGet, "/rum/v1/beacon.js?key=site-key-1", nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 200 || !strings.Contains(w.Body.String(), `{"key":"site-key-1","zone":"glb.example.com","pools":[{"id":"p1","url":"http://127.0.0.1:1/a.gif"}]}`) || w.Body.Len() > 4096 {
		t.Errorf("beacon: %d, %d bytes\n%s", w.Code, w.Body.Len(), w.Body)
	}
}

// Networks of one autonomous system are merged into its group, each
// capped at NetworkCap as in a country; a network of AS 0 (no ASN
// database, or not in it) is in no autonomous system but still in its
// country.
func TestBuildASN(t *testing.T) {
	h := func(ms float64, n int) []int32 {
		c := make([]int32, pools.RUMHistogramBuckets)
		c[bucketOf(ms)] = int32(n)
		return c
	}
	netC := netip.MustParsePrefix("100.64.0.0/24")
	samples := []pools.RUMSamples{
		{Network: netA, Pool: "fast", Counts: h(20, 30)}, {Network: netA, Pool: "slow", Counts: h(200, 30)},
		{Network: netB, Pool: "fast", Counts: h(900, 1000)}, {Network: netB, Pool: "slow", Counts: h(10, 1000)},
		{Network: netC, Pool: "fast", Counts: h(50, 7)},
	}
	as := map[netip.Prefix]uint32{netA: 64500, netB: 64500, netC: 0}
	locate := func(p netip.Prefix) geodata.Location {
		return geodata.Location{Country: "FR", Region: "WEU", ASN: as[p]}
	}
	m := Build(samples, nil, locate, 15*time.Minute, time.Unix(0, 0))
	if len(m.ASNs) != 1 || m.ASNs[0].ASN != 64500 || m.ASNs[0].Key != "" {
		t.Fatalf("ASNs %+v, want AS64500 alone", m.ASNs)
	}
	fast := m.ASNs[0].Pools[0]
	if fast.Pool != "fast" || fast.Samples != 30+NetworkCap {
		t.Errorf("AS64500 fast %+v, want %d samples (netB capped)", fast, 30+NetworkCap)
	}
	if c := m.Countries[0]; c.Pools[0].Samples != 30+NetworkCap+7 {
		t.Errorf("country %+v: the AS 0 network belongs to its country", c)
	}
	if m := Build(samples, nil, func(netip.Prefix) geodata.Location { return geodata.Location{Country: "FR"} }, time.Minute, time.Unix(0, 0)); len(m.ASNs) != 0 {
		t.Errorf("without ASNs: %+v", m.ASNs)
	}
}
