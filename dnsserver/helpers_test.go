package dnsserver

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/glb-dns/glb/analytics"
	"github.com/glb-dns/glb/geodata"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

func ptr[T any](v T) *T { return &v }

const testDigest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// testConfig is the configuration every behaviour test answers from.
func testConfig() *pools.Config {
	z := pools.DefaultZone()
	z.ID, z.Name, z.Serial = "z1", "glb.example.com", 42
	z.Nameservers = []string{"ns1.glb.example.com", "ns2.glb.example.com"}
	z.SOA.Minimum = 60
	big := []pools.Record{}
	for i := range 10 {
		big = append(big, pools.Record{Name: "big.glb.example.com", Type: "TXT", Content: fmt.Sprintf("%q", strings.Repeat(string(rune('a'+i)), 200))})
	}
	z.Records = append([]pools.Record{
		{Name: "ns1.glb.example.com", Type: "A", Content: "192.0.2.53"},
		{Name: "ns2.glb.example.com", Type: "A", Content: "192.0.2.54"},
		{Name: "www.glb.example.com", Type: "CNAME", Content: "lb-geo.glb.example.com."},
		{Name: "ext.glb.example.com", Type: "CNAME", Content: "www.example.net."},
		{Name: "cross.glb.example.com", Type: "CNAME", Content: "x.other.test."},
		{Name: "txt.glb.example.com", Type: "TXT", Content: `"hello world"`, TTL: 120},
		{Name: "a.b.c.deep.glb.example.com", Type: "A", Content: "192.0.2.99"},
		{Name: "mx.glb.example.com", Type: "MX", Content: "10 mail.glb.example.com."},
		// A delegation with in-zone glue, an out-of-zone nameserver and a DS.
		{Name: "sub.glb.example.com", Type: "NS", Content: "ns.sub.glb.example.com."},
		{Name: "sub.glb.example.com", Type: "NS", Content: "ns.other.test."},
		{Name: "sub.glb.example.com", Type: "DS", Content: "12345 13 2 " + testDigest},
		{Name: "ns.sub.glb.example.com", Type: "A", Content: "192.0.2.80"},
		{Name: "ns.sub.glb.example.com", Type: "AAAA", Content: "2001:db8::80"},
		// A delegation without DS whose nameserver is elsewhere in the zone.
		{Name: "nods.glb.example.com", Type: "NS", Content: "ns1.glb.example.com."},
		{Name: "tosub.glb.example.com", Type: "CNAME", Content: "www.sub.glb.example.com."},
		{Name: "tohttps.glb.example.com", Type: "CNAME", Content: "lb-https.glb.example.com."},
		// DNAMEs: into the other zone served here, and to a target so long
		// that a name below overflows 255 octets.
		{Name: "old.glb.example.com", Type: "DNAME", Content: "other.test."},
		// Occluded by that DNAME (RFC 6672 §2.4): redirected, never answered.
		{Name: "hidden.old.glb.example.com", Type: "A", Content: "192.0.2.99"},
		{Name: "long.glb.example.com", Type: "DNAME", Content: longDNAMETarget},
	}, big...)
	o := pools.DefaultZone()
	o.ID, o.Name, o.Serial, o.Nameservers = "z2", "other.test", 7, []string{"ns.other.test"}
	o.SOA = pools.SOA{MName: "ns.other.test", RName: "admin@other.test", Refresh: 1, Retry: 2, Expire: 3, Minimum: 600}
	o.Records = []pools.Record{{Name: "x.other.test", Type: "A", Content: "198.51.100.1"}}

	pool := func(id string, origins ...pools.Origin) pools.Pool {
		p := pools.DefaultPool()
		p.ID, p.Name, p.Origins = id, id, origins
		return p
	}
	origin := func(name, addr, zone string) pools.Origin {
		o := pools.DefaultOrigin()
		o.Name, o.Address, o.Zone = name, addr, zone
		return o
	}
	var many []pools.Origin
	for i := range 60 {
		many = append(many, origin(fmt.Sprintf("m%d", i), fmt.Sprintf("2001:db8::%x", i+1), ""))
	}
	lb := func(name string, defaults []string, mod func(*pools.LoadBalancer)) pools.LoadBalancer {
		l := pools.DefaultLoadBalancer()
		l.ID, l.Zone, l.Name, l.DefaultPools, l.FallbackPool = name, "z1", name+".glb.example.com", defaults, defaults[0]
		if mod != nil {
			mod(&l)
		}
		return l
	}
	return &pools.Config{
		Revision: 1,
		Zones:    []pools.Zone{z, o},
		Pools: []pools.Pool{
			pool("eu", origin("eu1", "192.0.2.10", "zone-a"), origin("eu2", "192.0.2.11", "zone-b"), origin("eu6", "2001:db8::10", "zone-a")),
			pool("us", origin("us1", "192.0.2.20", "us-west")),
			pool("cdn", origin("cdn", "cdn.example.net", "")),
			pool("v6", origin("v6", "2001:db8::1", "")),
			pool("many", many...),
		},
		LoadBalancers: []pools.LoadBalancer{
			lb("lb-geo", []string{"us"}, geoECS),
			// lb-geo with an HTTPS record (https.go).
			lb("lb-https", []string{"us"}, func(l *pools.LoadBalancer) {
				geoECS(l)
				l.HTTPS = &pools.HTTPSRecord{ALPN: []string{"h2", "h3"}, Port: 8443}
			}),
			lb("lb-off", []string{"us"}, nil),
			lb("lb-cname", []string{"cdn"}, nil),
			lb("lb-v6", []string{"v6"}, nil),
			lb("lb-all", []string{"many"}, func(l *pools.LoadBalancer) { l.Answers = 0 }),
		},
		Networks: []pools.Network{
			{Meta: pools.Meta{ID: "n1"}, CIDR: "198.51.100.0/24", Country: "DE", Region: "WEU", Zone: "zone-a"},
			{Meta: pools.Meta{ID: "n2"}, CIDR: "203.0.113.0/24", Country: "US", Region: "WNAM", Zone: "us-west"},
			{Meta: pools.Meta{ID: "n3"}, CIDR: "127.0.0.0/8", Country: "DE", Region: "WEU", Zone: "zone-a"},
		},
	}
}

// geoECS makes l the test's geo load balancer: DE to eu, ECS trusted,
// zonal affinity spilling across zones, TTL 20.
func geoECS(l *pools.LoadBalancer) {
	l.SteeringPolicy = pools.SteeringGeo
	l.CountryPools = map[string][]string{"DE": {"eu"}}
	l.LocationStrategy.PreferECS = pools.PreferECSAlways
	l.ZonalAffinity = pools.ZonalAffinity{Spillover: pools.AffinitySpillCrossZone}
	l.TTL = 20
}

func compileTest(t testing.TB, cfg *pools.Config) *Snapshot {
	t.Helper()
	st, err := steering.Compile(cfg, nil)
	if err != nil {
		t.Fatalf("steering compile: %v", err)
	}
	nets, err := geodata.NewNetworks(cfg.Networks)
	if err != nil {
		t.Fatalf("networks: %v", err)
	}
	s, err := Compile(st, geodata.Locator{Networks: nets})
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return s
}

// newTestServer returns a server with the test snapshot published, not
// listening; start it with startServer.
func newTestServer(t testing.TB, reg prometheus.Registerer) *Server {
	t.Helper()
	return newServing(t, reg, nil, testConfig())
}

// newServing returns a server, not listening, with cfg's snapshot
// published and the tests' options (quiet, short TCP idle, few TCP
// connections) as mod adjusts them.
func newServing(t testing.TB, reg prometheus.Registerer, mod func(*Config), cfg *pools.Config) *Server {
	t.Helper()
	c := Config{Addr: "127.0.0.1:0", Registerer: reg, Logger: slog.New(slog.DiscardHandler), TCPIdleTimeout: 2 * time.Second, MaxTCPConns: 8}
	if mod != nil {
		mod(&c)
	}
	s, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	s.Publish(compileTest(t, cfg))
	return s
}

// newCountedServer is the test server counting its answers into c and
// sampling its queries into sample (nil: none).
func newCountedServer(t testing.TB, c *analytics.Counts, sample *analytics.Sample) *Server {
	t.Helper()
	s, err := New(Config{Addr: "127.0.0.1:0", Registerer: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler), Counts: c, Sample: sample})
	if err != nil {
		t.Fatal(err)
	}
	s.Publish(compileTest(t, testConfig()))
	return s
}

// rowsText is rows as sorted "lb pool/origin region country rcode n" lines.
func rowsText(rows []pools.AnswerCount) string {
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%s %s/%s %s %s %s %d", r.LoadBalancer, r.Pool, r.Origin, r.Region, r.Country, r.Rcode, r.Answers))
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

func startServer(t testing.TB, s *Server) netip.AddrPort {
	t.Helper()
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	shutdownAtEnd(t, s)
	return s.Addr()
}

// shutdownAtEnd shuts the started server s down when the test ends, and
// fails the test if that fails.
func shutdownAtEnd(t testing.TB, s *Server) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
}

// tcase is one DNS behaviour: a query, who sends it, and the reply
// expected, sections in presentation format (compared sorted).
// longDNAMETarget is 245 octets in wire form: a name of 12 octets or
// more below its DNAME's owner cannot be redirected to it.
var longDNAMETarget = strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 40) + ".other.test."

type tcase struct {
	name   string
	qname  string
	qtype  uint16
	rd, cd bool

	edns    bool
	bufsize uint16 // default 1232
	version uint8
	do      bool
	ecs     string // client subnet sent, e.g. "198.51.100.0/24"

	src      string // resolver address (in process only), default 127.0.0.1
	tcp      bool
	procOnly bool // cannot be sent over a socket as is (source address)

	rcode  int
	flags  string // exact set, e.g. "qr aa rd"
	answer []string
	ns     []string
	extra  []string // besides the OPT
	scope  int      // expected ECS scope when ecs is set
}

func (c *tcase) msg() *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(c.qname, c.qtype)
	m.RecursionDesired = c.rd
	m.CheckingDisabled = c.cd
	if c.edns || c.ecs != "" {
		size := c.bufsize
		if size == 0 {
			size = 1232
		}
		o := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
		o.SetUDPSize(size)
		o.SetVersion(c.version)
		o.SetDo(c.do)
		if c.ecs != "" {
			p := netip.MustParsePrefix(c.ecs)
			e := &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, SourceNetmask: uint8(p.Bits()), Family: 1, Address: p.Addr().AsSlice()}
			if p.Addr().Is6() {
				e.Family = 2
			}
			o.Option = append(o.Option, e)
		}
		m.Extra = append(m.Extra, o)
	}
	return m
}

func flagString(m *dns.Msg) string {
	var f []string
	for _, x := range []struct {
		on   bool
		name string
	}{{m.Response, "qr"}, {m.Authoritative, "aa"}, {m.Truncated, "tc"}, {m.RecursionDesired, "rd"},
		{m.RecursionAvailable, "ra"}, {m.AuthenticatedData, "ad"}, {m.CheckingDisabled, "cd"}} {
		if x.on {
			f = append(f, x.name)
		}
	}
	return strings.Join(f, " ")
}

func normalize(t testing.TB, rrs []string) []string {
	t.Helper()
	out := []string{}
	for _, s := range rrs {
		rr, err := dns.NewRR(s)
		if err != nil || rr == nil {
			t.Fatalf("bad expected record %q: %v", s, err)
		}
		out = append(out, rrString(rr))
	}
	slices.Sort(out)
	return out
}

// rrString renders a record with its owner lower-cased (owners written as
// pointers into the question take the asker's case).
func rrString(rr dns.RR) string {
	rr = dns.Copy(rr)
	rr.Header().Name = strings.ToLower(rr.Header().Name)
	return rr.String()
}

func section(rrs []dns.RR) []string {
	out := []string{}
	for _, rr := range rrs {
		if rr.Header().Rrtype == dns.TypeOPT {
			continue
		}
		out = append(out, rrString(rr))
	}
	slices.Sort(out)
	return out
}

// check compares a reply with the case.
func (c *tcase) check(t testing.TB, q, r *dns.Msg) {
	t.Helper()
	if r.Id != q.Id {
		t.Errorf("id %d, want %d", r.Id, q.Id)
	}
	if r.Rcode != c.rcode {
		t.Errorf("rcode %s, want %s", dns.RcodeToString[r.Rcode], dns.RcodeToString[c.rcode])
	}
	if got := flagString(r); got != c.flags {
		t.Errorf("flags %q, want %q", got, c.flags)
	}
	if len(r.Question) != 1 || r.Question[0].Name != q.Question[0].Name || r.Question[0].Qtype != q.Question[0].Qtype {
		t.Errorf("question %v, want %v (letter case kept)", r.Question, q.Question)
	}
	for _, s := range []struct {
		name      string
		got, want []string
	}{{"answer", section(r.Answer), normalize(t, c.answer)}, {"authority", section(r.Ns), normalize(t, c.ns)}, {"additional", section(r.Extra), normalize(t, c.extra)}} {
		if !slices.Equal(s.got, s.want) {
			t.Errorf("%s section:\n got  %q\n want %q", s.name, s.got, s.want)
		}
	}
	opt := r.IsEdns0()
	wantOPT := c.edns || c.ecs != ""
	if (opt != nil) != wantOPT {
		t.Fatalf("OPT in reply %v, want %v", opt != nil, wantOPT)
	}
	if opt == nil {
		return
	}
	if opt.Version() != 0 || opt.UDPSize() != 1232 || opt.Do() != c.do {
		t.Errorf("OPT version %d size %d do %v, want 0 1232 %v", opt.Version(), opt.UDPSize(), opt.Do(), c.do)
	}
	var ecs *dns.EDNS0_SUBNET
	for _, o := range opt.Option {
		if e, ok := o.(*dns.EDNS0_SUBNET); ok {
			ecs = e
		} else {
			t.Errorf("unexpected option %v", o)
		}
	}
	if (ecs != nil) != (c.ecs != "" && c.rcode != dns.RcodeFormatError && c.rcode != dns.RcodeBadVers) {
		t.Fatalf("ECS echoed: %v", ecs)
	}
	if ecs != nil {
		p := netip.MustParsePrefix(c.ecs)
		if int(ecs.SourceNetmask) != p.Bits() || int(ecs.SourceScope) != c.scope || !ecs.Address.Equal(p.Addr().AsSlice()) {
			t.Errorf("ECS %v, want %s scope %d", ecs, c.ecs, c.scope)
		}
	}
}

// exchangeProc answers the case in process.
func exchangeProc(t testing.TB, s *Server, c *tcase) (*dns.Msg, *dns.Msg) {
	t.Helper()
	q := c.msg()
	wire, err := q.Pack()
	if err != nil {
		t.Fatal(err)
	}
	src := netip.MustParseAddr("127.0.0.1")
	if c.src != "" {
		src = netip.MustParseAddr(c.src)
	}
	out := s.handle(wire, src, c.tcp, nil)
	if out == nil {
		t.Fatal("no reply")
	}
	r := new(dns.Msg)
	if err := r.Unpack(out); err != nil {
		t.Fatalf("reply does not unpack: %v", err)
	}
	return q, r
}

// exchangeNet sends the case to a listening server.
func exchangeNet(t testing.TB, addr netip.AddrPort, c *tcase) (*dns.Msg, *dns.Msg) {
	t.Helper()
	q := c.msg()
	cl := &dns.Client{Net: "udp", Timeout: 5 * time.Second, UDPSize: 65535}
	if c.tcp {
		cl.Net = "tcp"
	}
	r, _, err := cl.Exchange(q, addr.String())
	if err != nil && r == nil {
		t.Fatalf("exchange: %v", err)
	}
	return q, r
}

var netipLoopback = netip.MustParseAddr("127.0.0.1")
