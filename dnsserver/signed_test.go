package dnsserver

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/zonekeys"
)

// signedConfig is testConfig with glb.example.com signed by keys, made
// fresh unless given (a rollover test passes its own).
func signedConfig(t testing.TB, keys []pools.ZoneKey) *pools.Config {
	t.Helper()
	cfg := testConfig()
	cfg.Zones[0].DNSSEC.Enabled = true
	if keys == nil {
		var err error
		if keys, err = zonekeys.Ensure(cfg.Zones[0].Name, nil, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	for i := range keys {
		keys[i].Zone = cfg.Zones[0].ID
	}
	cfg.DNSSECKeys = keys
	return cfg
}

func newSignedServer(t testing.TB, reg prometheus.Registerer, keys []pools.ZoneKey) (*Server, []pools.ZoneKey) {
	t.Helper()
	cfg := signedConfig(t, keys)
	return newServing(t, reg, nil, cfg), cfg.DNSSECKeys
}

// dnskeys are the zone's keys as a resolver would see them.
func dnskeys(t testing.TB, keys []pools.ZoneKey) map[uint16]*dns.DNSKEY {
	out := map[uint16]*dns.DNSKEY{}
	for _, k := range keys {
		s, _, err := zonekeys.PublicKey("glb.example.com", k, 300)
		if err != nil {
			t.Fatal(err)
		}
		rr, err := dns.NewRR(s)
		if err != nil {
			t.Fatal(err)
		}
		out[k.Tag] = rr.(*dns.DNSKEY)
	}
	return out
}

// verifySigned checks a reply as a validator would: every RRset of the
// answer and authority sections of a signed zone carries an RRSIG that
// RRSIG.Verify accepts with one of keys, valid now; it returns the tags
// that signed each RRset ("name/TYPE" → tags).
func verifySigned(t testing.TB, r *dns.Msg, keys map[uint16]*dns.DNSKEY) map[string][]uint16 {
	t.Helper()
	signedBy := map[string][]uint16{}
	for _, sec := range [][]dns.RR{r.Answer, r.Ns} {
		sets := map[string][]dns.RR{}
		var sigs []*dns.RRSIG
		for _, rr := range sec {
			if s, ok := rr.(*dns.RRSIG); ok {
				sigs = append(sigs, s)
				continue
			}
			k := strings.ToLower(rr.Header().Name) + "/" + dns.TypeToString[rr.Header().Rrtype]
			sets[k] = append(sets[k], rr)
		}
		for _, s := range sigs {
			k := strings.ToLower(s.Hdr.Name) + "/" + dns.TypeToString[s.TypeCovered]
			set := sets[k]
			key := keys[s.KeyTag]
			if set == nil || key == nil {
				t.Fatalf("RRSIG %s covers nothing in its section or has an unknown key", s)
			}
			if err := s.Verify(key, set); err != nil {
				t.Fatalf("RRSIG.Verify %s over %v: %v", s, set, err)
			}
			if !s.ValidityPeriod(time.Now()) || s.Hdr.Ttl != set[0].Header().Ttl || s.OrigTtl != set[0].Header().Ttl {
				t.Fatalf("RRSIG %s: not valid now or TTL not the RRset's", s)
			}
			signedBy[k] = append(signedBy[k], s.KeyTag)
		}
		for k := range sets {
			if !r.Authoritative && strings.HasSuffix(k, "/NS") {
				continue // a referral's NS RRset is the child's: unsigned
			}
			if strings.HasSuffix(strings.SplitN(k, "/", 2)[0], "glb.example.com.") && signedBy[k] == nil {
				t.Fatalf("RRset %s unsigned in\n%s", k, r)
			}
		}
	}
	return signedBy
}

// nsecAt returns the NSEC of the authority section, checking that it is
// RFC 9824's: owner the query name, next name \000.owner.
func nsecAt(t testing.TB, r *dns.Msg, qname string) *dns.NSEC {
	t.Helper()
	for _, rr := range r.Ns {
		if n, ok := rr.(*dns.NSEC); ok {
			if !strings.EqualFold(n.Hdr.Name, qname) || !strings.EqualFold(n.NextDomain, "\\000."+qname) || n.Hdr.Ttl != 60 {
				t.Fatalf("NSEC %s, want owner %s, next \\000.%s, TTL 60", n, qname, qname)
			}
			return n
		}
	}
	t.Fatalf("no NSEC in\n%s", r)
	return nil
}

// bitmap checks that the NSEC at name (see nsecAt) lists exactly the
// types want.
func bitmap(name string, want ...uint16) func(*testing.T, *dns.Msg) {
	return func(t *testing.T, r *dns.Msg) {
		if n := nsecAt(t, r, name); !slices.Equal(n.TypeBitMap, want) {
			t.Errorf("NSEC bitmap at %s: %v, want %v", name, typeNames(n.TypeBitMap), typeNames(want))
		}
	}
}

func typeNames(types []uint16) []string {
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = dns.TypeToString[t]
	}
	return out
}

// TestSignedAnswerShapes verifies every kind of answer with DO set, in
// process and over real sockets.
func TestSignedAnswerShapes(t *testing.T) {
	s, keys := newSignedServer(t, prometheus.NewRegistry(), nil)
	addr := startServer(t, s)
	dk := dnskeys(t, keys)
	tag := keys[0].Tag
	type shape struct {
		name   string
		c      tcase
		rcode  int
		answer int // records besides RRSIGs
		check  func(t *testing.T, r *dns.Msg)
	}
	noType := func(qname string, absent ...uint16) func(t *testing.T, r *dns.Msg) {
		return func(t *testing.T, r *dns.Msg) {
			n := nsecAt(t, r, qname)
			for _, a := range absent {
				if slices.Contains(n.TypeBitMap, a) {
					t.Errorf("NSEC bitmap %v has %s", n.TypeBitMap, dns.TypeToString[a])
				}
			}
		}
	}
	shapes := []shape{
		{name: "load-balanced A with ECS", c: tcase{qname: "lb-geo.glb.example.com.", qtype: dns.TypeA, ecs: "198.51.100.0/24"}, answer: 1},
		{name: "load-balanced A without ECS", c: tcase{qname: "lb-off.glb.example.com.", qtype: dns.TypeA}, answer: 1},
		{name: "load-balanced AAAA, every origin (60), TCP", c: tcase{qname: "lb-all.glb.example.com.", qtype: dns.TypeAAAA, tcp: true}, answer: 60},
		{name: "load balancer to a hostname (CNAME)", c: tcase{qname: "lb-cname.glb.example.com.", qtype: dns.TypeA}, answer: 1},
		{name: "load-balanced HTTPS with ECS", c: tcase{qname: "lb-https.glb.example.com.", qtype: dns.TypeHTTPS, ecs: "198.51.100.0/24"}, answer: 1},
		{name: "NODATA: HTTPS at a load balancer without https", c: tcase{qname: "lb-geo.glb.example.com.", qtype: dns.TypeHTTPS},
			check: bitmap("lb-geo.glb.example.com.", dns.TypeA, dns.TypeAAAA, dns.TypeRRSIG, dns.TypeNSEC)},
		{name: "NODATA: TXT at a load balancer with https, whose bitmap has HTTPS", c: tcase{qname: "lb-https.glb.example.com.", qtype: dns.TypeTXT},
			check: bitmap("lb-https.glb.example.com.", dns.TypeA, dns.TypeAAAA, dns.TypeRRSIG, dns.TypeNSEC, dns.TypeHTTPS)},
		{name: "static A", c: tcase{qname: "ns1.glb.example.com.", qtype: dns.TypeA}, answer: 1},
		{name: "static MX", c: tcase{qname: "mx.glb.example.com.", qtype: dns.TypeMX}, answer: 1},
		{name: "CNAME chain to a load balancer", c: tcase{qname: "www.glb.example.com.", qtype: dns.TypeA, ecs: "198.51.100.0/24"}, answer: 2},
		{name: "SOA", c: tcase{qname: "glb.example.com.", qtype: dns.TypeSOA}, answer: 1},
		{name: "NS", c: tcase{qname: "glb.example.com.", qtype: dns.TypeNS}, answer: 2},
		{name: "DNSKEY", c: tcase{qname: "glb.example.com.", qtype: dns.TypeDNSKEY}, answer: 1},
		{name: "CDS", c: tcase{qname: "glb.example.com.", qtype: dns.TypeCDS}, answer: 1},
		{name: "CDNSKEY", c: tcase{qname: "glb.example.com.", qtype: dns.TypeCDNSKEY}, answer: 1},
		{name: "ANY (RFC 8482 HINFO)", c: tcase{qname: "txt.glb.example.com.", qtype: dns.TypeANY}, answer: 1},
		{name: "NXDOMAIN as compact denial", c: tcase{qname: "nope.glb.example.com.", qtype: dns.TypeA},
			check: bitmap("nope.glb.example.com.", dns.TypeRRSIG, dns.TypeNSEC, dns.TypeNXNAME)},
		{name: "NODATA: AAAA on an IPv4-only load balancer", c: tcase{qname: "lb-off.glb.example.com.", qtype: dns.TypeAAAA},
			check: noType("lb-off.glb.example.com.", dns.TypeAAAA)},
		{name: "NODATA: static name, other type", c: tcase{qname: "ns1.glb.example.com.", qtype: dns.TypeTXT},
			check: bitmap("ns1.glb.example.com.", dns.TypeA, dns.TypeRRSIG, dns.TypeNSEC)},
		{name: "NODATA: empty non-terminal", c: tcase{qname: "c.deep.glb.example.com.", qtype: dns.TypeA},
			check: noType("c.deep.glb.example.com.", dns.TypeA)},
		{name: "NODATA at the apex", c: tcase{qname: "glb.example.com.", qtype: dns.TypeAAAA},
			check: noType("glb.example.com.", dns.TypeAAAA)},
		{name: "referral to a signed child: DS and its RRSIG", c: tcase{qname: "www.sub.glb.example.com.", qtype: dns.TypeA},
			check: func(t *testing.T, r *dns.Msg) {
				if r.Authoritative || !hasType(r.Ns, dns.TypeDS) || !hasType(r.Ns, dns.TypeNS) || hasType(r.Ns, dns.TypeNSEC) || len(r.Extra) != 3 {
					t.Errorf("want NS, DS, RRSIG in authority, glue in additional\n%s", r)
				}
			}},
		{name: "referral to an unsigned child: NSEC proves no DS", c: tcase{qname: "nods.glb.example.com.", qtype: dns.TypeA},
			check: func(t *testing.T, r *dns.Msg) {
				n := nsecAt(t, r, "nods.glb.example.com.")
				if r.Authoritative || !slices.Equal(n.TypeBitMap, []uint16{dns.TypeNS, dns.TypeRRSIG, dns.TypeNSEC}) {
					t.Errorf("want a referral with NSEC bitmap NS RRSIG NSEC, got %v\n%s", n.TypeBitMap, r)
				}
			}},
		{name: "DS at the cut, answered by the parent", c: tcase{qname: "sub.glb.example.com.", qtype: dns.TypeDS}, answer: 1},
		{name: "DS at an unsigned cut: NODATA", c: tcase{qname: "nods.glb.example.com.", qtype: dns.TypeDS},
			check: func(t *testing.T, r *dns.Msg) { nsecAt(t, r, "nods.glb.example.com.") }},
		{name: "NXDOMAIN, query name in capitals", c: tcase{qname: "NoPe.Glb.Example.Com.", qtype: dns.TypeAAAA},
			check: func(t *testing.T, r *dns.Msg) { nsecAt(t, r, "nope.glb.example.com.") }},
	}
	for _, sh := range shapes {
		for _, net := range []bool{false, true} {
			c := sh.c
			c.edns, c.do = true, true
			var r *dns.Msg
			if net {
				_, r = exchangeNet(t, addr, &c)
			} else {
				_, r = exchangeProc(t, s, &c)
			}
			name := sh.name
			if net {
				name += " (socket)"
			}
			t.Run(name, func(t *testing.T) {
				if r.Rcode != sh.rcode || r.Authoritative == strings.HasPrefix(sh.name, "referral") || r.Truncated {
					t.Fatalf("rcode %s aa %v tc %v\n%s", dns.RcodeToString[r.Rcode], r.Authoritative, r.Truncated, r)
				}
				if o := r.IsEdns0(); o == nil || !o.Do() {
					t.Error("DO not echoed")
				}
				signed := verifySigned(t, r, dk)
				n := 0
				for _, rr := range r.Answer {
					if rr.Header().Rrtype != dns.TypeRRSIG {
						n++
					}
				}
				if n != sh.answer {
					t.Errorf("%d answer records, want %d\n%s", n, sh.answer, r)
				}
				for k, tags := range signed {
					if !slices.Equal(tags, []uint16{tag}) {
						t.Errorf("%s signed by %v, want [%d]", k, tags, tag)
					}
				}
				if sh.check != nil {
					sh.check(t, r)
				}
			})
		}
	}
}

// TestUnsignedWithoutDO: the same server answers without RRSIG or NSEC when
// DO is clear, and NXDOMAIN keeps its rcode.
func TestUnsignedWithoutDO(t *testing.T) {
	s, _ := newSignedServer(t, prometheus.NewRegistry(), nil)
	for _, c := range []tcase{
		{qname: "lb-off.glb.example.com.", qtype: dns.TypeA, edns: true},
		{qname: "nope.glb.example.com.", qtype: dns.TypeA, edns: true, rcode: dns.RcodeNameError},
		{qname: "lb-off.glb.example.com.", qtype: dns.TypeAAAA},
	} {
		_, r := exchangeProc(t, s, &c)
		if r.Rcode != c.rcode {
			t.Errorf("%s: rcode %s", c.qname, dns.RcodeToString[r.Rcode])
		}
		for _, rr := range append(r.Answer, r.Ns...) {
			if t := rr.Header().Rrtype; t == dns.TypeRRSIG || t == dns.TypeNSEC {
				panic("DNSSEC records without DO: " + rr.String())
			}
		}
	}
}

// TestSignedTruncatesOverUDP: signatures count against the EDNS buffer;
// what does not fit is sent with TC and empty sections.
func TestSignedTruncatesOverUDP(t *testing.T) {
	s, keys := newSignedServer(t, prometheus.NewRegistry(), nil)
	c := tcase{qname: "lb-all.glb.example.com.", qtype: dns.TypeAAAA, edns: true, do: true, bufsize: 1232}
	_, r := exchangeProc(t, s, &c)
	if !r.Truncated || len(r.Answer)+len(r.Ns) != 0 {
		t.Fatalf("60 AAAA over UDP: tc %v, %d+%d records", r.Truncated, len(r.Answer), len(r.Ns))
	}
	// 8 records fit unsigned in 512 bytes, but not with the signature.
	c = tcase{qname: "big.glb.example.com.", qtype: dns.TypeTXT, edns: true, do: true, tcp: true}
	_, r = exchangeProc(t, s, &c)
	verifySigned(t, r, dnskeys(t, keys))
	if r.Truncated || len(r.Answer) != 11 {
		t.Fatalf("big TXT over TCP: tc %v, %d records", r.Truncated, len(r.Answer))
	}
}

// TestSignatureCacheCounts: a repeated answer is signed once, then served
// from the cache; the counters say so.
func TestSignatureCacheCounts(t *testing.T) {
	reg := prometheus.NewRegistry()
	s, _ := newSignedServer(t, reg, nil)
	c := tcase{qname: "lb-off.glb.example.com.", qtype: dns.TypeA, edns: true, do: true}
	for range 5 {
		exchangeProc(t, s, &c)
	}
	signed := testutil.ToFloat64(s.sigMetrics.signed)
	hits := testutil.ToFloat64(s.sigMetrics.hits)
	if signed != 1 || hits != 4 {
		t.Errorf("5 identical queries: %v signed, %v hits; want 1 and 4", signed, hits)
	}
	// A new snapshot with the same keys keeps the cache warm.
	s.Publish(compileTest(t, signedConfig(t, s.live.Load().snap.steer.Config().DNSSECKeys)))
	exchangeProc(t, s, &c)
	if got := testutil.ToFloat64(s.sigMetrics.signed); got != 1 {
		t.Errorf("after a republish with the same keys: %v signed, want 1", got)
	}
}

// TestSignedRolloverEveryStep: at each rollover step, a resolver holding
// the DS of any key still in the DNSKEY RRset validates, and answers are
// signed by the active key alone.
func TestSignedRolloverEveryStep(t *testing.T) {
	s, keys := newSignedServer(t, prometheus.NewRegistry(), nil)
	now := time.Now()
	check := func(step string, keys []pools.ZoneKey, active uint16, inSet int) {
		t.Helper()
		s.Publish(compileTest(t, signedConfig(t, keys)))
		dk := dnskeys(t, keys)
		for _, c := range []tcase{
			{qname: "glb.example.com.", qtype: dns.TypeDNSKEY},
			{qname: "lb-off.glb.example.com.", qtype: dns.TypeA},
			{qname: "nope.glb.example.com.", qtype: dns.TypeA},
		} {
			c.edns, c.do = true, true
			_, r := exchangeProc(t, s, &c)
			for k, tags := range verifySigned(t, r, dk) {
				want := []uint16{active}
				if strings.HasSuffix(k, "/DNSKEY") {
					want = nil
					for _, zk := range keys {
						want = append(want, zk.Tag)
					}
				}
				slices.Sort(tags)
				slices.Sort(want)
				if !slices.Equal(tags, want) {
					t.Errorf("%s: %s signed by %v, want %v", step, k, tags, want)
				}
			}
			if c.qtype == dns.TypeDNSKEY && len(r.Answer) != 2*inSet {
				t.Errorf("%s: %d DNSKEY+RRSIG records, want %d", step, len(r.Answer), 2*inSet)
			}
		}
	}
	old := keys[0].Tag
	check("idle", keys, old, 1)
	keys, _, err := zonekeys.Rollover("glb.example.com", keys, now, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	check("published", keys, old, 2)
	keys, _, _ = zonekeys.Rollover("glb.example.com", keys, now, 0, false)
	check("activated", keys, keys[1].Tag, 2)
	keys, _, _ = zonekeys.Rollover("glb.example.com", keys, now, 0, false)
	check("idle again", keys, keys[0].Tag, 1)
}

// TestSignedHandlerAllocatesNothing: a signed answer from a warm cache
// allocates nothing, as the unsigned path.
func TestSignedHandlerAllocatesNothing(t *testing.T) {
	s, _ := newSignedServer(t, prometheus.NewRegistry(), nil)
	w := newWorker()
	src := netip.MustParseAddr("127.0.0.1")
	for _, c := range []tcase{
		{qname: "lb-geo.glb.example.com.", qtype: dns.TypeA, ecs: "198.51.100.0/24"},
		{qname: "lb-off.glb.example.com.", qtype: dns.TypeAAAA},
		{qname: "ns1.glb.example.com.", qtype: dns.TypeA},
		{qname: "nope.glb.example.com.", qtype: dns.TypeA},
		{qname: "lb-https.glb.example.com.", qtype: dns.TypeHTTPS, ecs: "198.51.100.0/24"},
	} {
		c.edns, c.do = true, true
		q, err := c.msg().Pack()
		if err != nil {
			t.Fatal(err)
		}
		w.handle(s, q, src, false) // warm the cache
		if n := testing.AllocsPerRun(1000, func() { w.handle(s, q, src, false) }); n != 0 {
			t.Errorf("%s: %.1f allocations per signed query, want 0", c.qname, n)
		}
	}
}

func benchSigned(b *testing.B, s *Server, qname string, do bool) {
	c := tcase{qname: qname, qtype: dns.TypeA, ecs: "198.51.100.0/24", edns: true, do: do}
	q, err := c.msg().Pack()
	if err != nil {
		b.Fatal(err)
	}
	benchHandle(b, s, q, netip.MustParseAddr("127.0.0.1"))
}

// BenchmarkSignedHandler compares the same answers with DO clear and set,
// on the same server in the same run (the acceptance asks signed ≥ 50 %
// of unsigned QPS for the common load-balanced names).
func BenchmarkSignedHandler(b *testing.B) {
	s, _ := newSignedServer(b, prometheus.NewRegistry(), nil)
	for _, name := range []string{"lb-geo.glb.example.com.", "lb-off.glb.example.com.", "nope.glb.example.com."} {
		b.Run(strings.Split(name, ".")[0]+"/unsigned", func(b *testing.B) { benchSigned(b, s, name, false) })
		b.Run(strings.Split(name, ".")[0]+"/signed", func(b *testing.B) { benchSigned(b, s, name, true) })
	}
}

func hasType(rrs []dns.RR, t uint16) bool {
	return slices.ContainsFunc(rrs, func(rr dns.RR) bool { return rr.Header().Rrtype == t })
}
