package dnsserver

import (
	"fmt"
	"strings"
	"testing"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
)

const (
	soa    = "glb.example.com. 300 IN SOA ns1.glb.example.com. hostmaster.glb.example.com. 42 14400 3600 604800 60"
	negSOA = "glb.example.com. 60 IN SOA ns1.glb.example.com. hostmaster.glb.example.com. 42 14400 3600 604800 60"
)

func bigTXT() []string {
	var out []string
	for i := range 10 {
		out = append(out, fmt.Sprintf("big.glb.example.com. 300 IN TXT %q", strings.Repeat(string(rune('a'+i)), 200)))
	}
	return out
}

func manyAAAA() []string {
	var out []string
	for i := range 60 {
		out = append(out, fmt.Sprintf("lb-all.glb.example.com. 30 IN AAAA 2001:db8::%x", i+1))
	}
	return out
}

var (
	subNS   = []string{"sub.glb.example.com. 300 IN NS ns.sub.glb.example.com.", "sub.glb.example.com. 300 IN NS ns.other.test."}
	subGlue = []string{"ns.sub.glb.example.com. 300 IN A 192.0.2.80", "ns.sub.glb.example.com. 300 IN AAAA 2001:db8::80"}
)

var cases = []tcase{
	{name: "apex SOA", qname: "glb.example.com.", qtype: dns.TypeSOA, flags: "qr aa", answer: []string{soa}},
	{name: "apex NS with in-zone glue", qname: "glb.example.com.", qtype: dns.TypeNS, flags: "qr aa",
		answer: []string{"glb.example.com. 300 IN NS ns1.glb.example.com.", "glb.example.com. 300 IN NS ns2.glb.example.com."},
		extra:  []string{"ns1.glb.example.com. 300 IN A 192.0.2.53", "ns2.glb.example.com. 300 IN A 192.0.2.54"}},
	{name: "apex NS, nameserver out of zone: no glue", qname: "other.test.", qtype: dns.TypeNS, flags: "qr aa",
		answer: []string{"other.test. 300 IN NS ns.other.test."}},
	{name: "referral at the cut", qname: "sub.glb.example.com.", qtype: dns.TypeA, flags: "qr", ns: subNS, extra: subGlue},
	{name: "referral below the cut", qname: "www.sub.glb.example.com.", qtype: dns.TypeA, edns: true, flags: "qr", ns: subNS, extra: subGlue},
	{name: "referral for NS at the cut", qname: "sub.glb.example.com.", qtype: dns.TypeNS, flags: "qr", ns: subNS, extra: subGlue},
	{name: "referral for ANY at the cut", qname: "sub.glb.example.com.", qtype: dns.TypeANY, flags: "qr", ns: subNS, extra: subGlue},
	{name: "glue is not answered with AA", qname: "ns.sub.glb.example.com.", qtype: dns.TypeA, flags: "qr", ns: subNS, extra: subGlue},
	{name: "DS below the cut is referred", qname: "x.sub.glb.example.com.", qtype: dns.TypeDS, flags: "qr", ns: subNS, extra: subGlue},
	{name: "DS at the cut answered by the parent", qname: "sub.glb.example.com.", qtype: dns.TypeDS, flags: "qr aa",
		answer: []string{"sub.glb.example.com. 300 IN DS 12345 13 2 " + testDigest}},
	{name: "DS at a cut without one: NODATA", qname: "nods.glb.example.com.", qtype: dns.TypeDS, flags: "qr aa", ns: []string{negSOA}},
	{name: "referral with glue from elsewhere in the zone", qname: "a.nods.glb.example.com.", qtype: dns.TypeAAAA, flags: "qr",
		ns: []string{"nods.glb.example.com. 300 IN NS ns1.glb.example.com."}, extra: []string{"ns1.glb.example.com. 300 IN A 192.0.2.53"}},
	{name: "CNAME into a delegation is not followed", qname: "tosub.glb.example.com.", qtype: dns.TypeA, flags: "qr aa",
		answer: []string{"tosub.glb.example.com. 300 IN CNAME www.sub.glb.example.com."}},
	{name: "below a DNAME: the DNAME, a CNAME made from it, its target followed", qname: "X.Old.glb.example.com.", qtype: dns.TypeA, flags: "qr aa",
		answer: []string{"old.glb.example.com. 300 IN DNAME other.test.", "x.old.glb.example.com. 300 IN CNAME x.other.test.", "x.other.test. 300 IN A 198.51.100.1"}},
	{name: "a name that exists below a DNAME is occluded: redirected, its own A never answered", qname: "hidden.old.glb.example.com.", qtype: dns.TypeA, rcode: dns.RcodeNameError, flags: "qr aa",
		answer: []string{"old.glb.example.com. 300 IN DNAME other.test.", "hidden.old.glb.example.com. 300 IN CNAME hidden.other.test."},
		ns:     []string{"other.test. 300 IN SOA ns.other.test. admin.other.test. 7 1 2 3 600"}},
	{name: "below a DNAME, two labels, target missing: NXDOMAIN of the target's zone", qname: "y.x.old.glb.example.com.", qtype: dns.TypeTXT, rcode: dns.RcodeNameError, flags: "qr aa",
		answer: []string{"old.glb.example.com. 300 IN DNAME other.test.", "y.x.old.glb.example.com. 300 IN CNAME y.x.other.test."},
		ns:     []string{"other.test. 300 IN SOA ns.other.test. admin.other.test. 7 1 2 3 600"}},
	{name: "a DNAME's owner is not redirected", qname: "old.glb.example.com.", qtype: dns.TypeA, flags: "qr aa", ns: []string{negSOA}},
	{name: "the DNAME itself at its owner", qname: "old.glb.example.com.", qtype: dns.TypeDNAME, flags: "qr aa",
		answer: []string{"old.glb.example.com. 300 IN DNAME other.test."}},
	{name: "below a DNAME past 255 octets: YXDOMAIN with the DNAME", qname: "twelve-chars.long.glb.example.com.", qtype: dns.TypeA, rcode: dns.RcodeYXDomain, flags: "qr aa",
		answer: []string{"long.glb.example.com. 300 IN DNAME " + longDNAMETarget}},
	{name: "static A", qname: "ns1.glb.example.com.", qtype: dns.TypeA, flags: "qr aa", answer: []string{"ns1.glb.example.com. 300 IN A 192.0.2.53"}},
	{name: "letter case kept, RD and CD copied", qname: "NS1.Glb.Example.COM.", qtype: dns.TypeA, rd: true, cd: true,
		flags: "qr aa rd cd", answer: []string{"ns1.glb.example.com. 300 IN A 192.0.2.53"}},
	{name: "NXDOMAIN with SOA at negative TTL", qname: "nope.glb.example.com.", qtype: dns.TypeA, rcode: dns.RcodeNameError, flags: "qr aa", ns: []string{negSOA}},
	{name: "NXDOMAIN below an existing name", qname: "x.ns1.glb.example.com.", qtype: dns.TypeA, rcode: dns.RcodeNameError, flags: "qr aa", ns: []string{negSOA}},
	{name: "NODATA", qname: "ns1.glb.example.com.", qtype: dns.TypeAAAA, flags: "qr aa", ns: []string{negSOA}},
	{name: "empty non-terminal is NODATA", qname: "c.deep.glb.example.com.", qtype: dns.TypeA, flags: "qr aa", ns: []string{negSOA}},
	{name: "name below empty non-terminals", qname: "a.b.c.deep.glb.example.com.", qtype: dns.TypeA, flags: "qr aa", answer: []string{"a.b.c.deep.glb.example.com. 300 IN A 192.0.2.99"}},
	{name: "outside served zones REFUSED without AA", qname: "example.org.", qtype: dns.TypeA, rd: true, rcode: dns.RcodeRefused, flags: "qr rd"},
	{name: "parent of a zone REFUSED", qname: "example.com.", qtype: dns.TypeSOA, rcode: dns.RcodeRefused, flags: "qr"},
	{name: "AXFR refused", qname: "glb.example.com.", qtype: dns.TypeAXFR, tcp: true, rcode: dns.RcodeRefused, flags: "qr"},
	{name: "IXFR refused", qname: "glb.example.com.", qtype: dns.TypeIXFR, rcode: dns.RcodeRefused, flags: "qr"},
	{name: "TXT with its own TTL", qname: "txt.glb.example.com.", qtype: dns.TypeTXT, flags: "qr aa", answer: []string{`txt.glb.example.com. 120 IN TXT "hello world"`}},
	{name: "MX", qname: "mx.glb.example.com.", qtype: dns.TypeMX, flags: "qr aa", answer: []string{"mx.glb.example.com. 300 IN MX 10 mail.glb.example.com."}},
	{name: "ANY answered minimally", qname: "txt.glb.example.com.", qtype: dns.TypeANY, flags: "qr aa", answer: []string{`txt.glb.example.com. 300 IN HINFO "RFC8482" ""`}},
	{name: "ANY on a missing name", qname: "nope.glb.example.com.", qtype: dns.TypeANY, rcode: dns.RcodeNameError, flags: "qr aa", ns: []string{negSOA}},
	{name: "unknown type NODATA", qname: "txt.glb.example.com.", qtype: 65280, flags: "qr aa", ns: []string{negSOA}},
	{name: "CNAME to a name outside", qname: "ext.glb.example.com.", qtype: dns.TypeA, flags: "qr aa", answer: []string{"ext.glb.example.com. 300 IN CNAME www.example.net."}},
	{name: "CNAME asked for itself", qname: "ext.glb.example.com.", qtype: dns.TypeCNAME, flags: "qr aa", answer: []string{"ext.glb.example.com. 300 IN CNAME www.example.net."}},
	{name: "CNAME followed into another served zone", qname: "cross.glb.example.com.", qtype: dns.TypeA, flags: "qr aa",
		answer: []string{"cross.glb.example.com. 300 IN CNAME x.other.test.", "x.other.test. 300 IN A 198.51.100.1"}},
	{name: "CNAME followed to a load balancer", qname: "www.glb.example.com.", qtype: dns.TypeA, ecs: "198.51.100.0/24", scope: 24, flags: "qr aa",
		answer: []string{"www.glb.example.com. 300 IN CNAME lb-geo.glb.example.com.", "lb-geo.glb.example.com. 20 IN A 192.0.2.10"}},
	{name: "CNAME followed to NODATA", qname: "cross.glb.example.com.", qtype: dns.TypeAAAA, flags: "qr aa",
		answer: []string{"cross.glb.example.com. 300 IN CNAME x.other.test."},
		ns:     []string{"other.test. 300 IN SOA ns.other.test. admin.other.test. 7 1 2 3 600"}},

	{name: "geo: ECS in DE, zonal affinity to zone-a", qname: "lb-geo.glb.example.com.", qtype: dns.TypeA, ecs: "198.51.100.0/24", scope: 24,
		flags: "qr aa", answer: []string{"lb-geo.glb.example.com. 20 IN A 192.0.2.10"}},
	{name: "geo: ECS in DE, AAAA", qname: "lb-geo.glb.example.com.", qtype: dns.TypeAAAA, ecs: "198.51.100.0/24", scope: 24,
		flags: "qr aa", answer: []string{"lb-geo.glb.example.com. 20 IN AAAA 2001:db8::10"}},
	{name: "geo: ECS in the US", qname: "lb-geo.glb.example.com.", qtype: dns.TypeA, ecs: "203.0.113.0/24", scope: 24,
		flags: "qr aa", answer: []string{"lb-geo.glb.example.com. 20 IN A 192.0.2.20"}},
	{name: "geo: ECS /16 narrower than the network", qname: "lb-geo.glb.example.com.", qtype: dns.TypeA, ecs: "203.0.0.0/16", scope: 16,
		flags: "qr aa", answer: []string{"lb-geo.glb.example.com. 20 IN A 192.0.2.20"}},
	{name: "geo: ECS unknown, scope the source", qname: "lb-geo.glb.example.com.", qtype: dns.TypeA, ecs: "192.0.2.0/24", scope: 24,
		flags: "qr aa", answer: []string{"lb-geo.glb.example.com. 20 IN A 192.0.2.20"}},
	{name: "geo: ECS source 0 locates by the resolver, scope 0", qname: "lb-geo.glb.example.com.", qtype: dns.TypeA, ecs: "0.0.0.0/0", scope: 0,
		flags: "qr aa", answer: []string{"lb-geo.glb.example.com. 20 IN A 192.0.2.10"}},
	{name: "geo: resolver address without ECS", qname: "lb-geo.glb.example.com.", qtype: dns.TypeA, src: "203.0.113.7", procOnly: true,
		flags: "qr aa", answer: []string{"lb-geo.glb.example.com. 20 IN A 192.0.2.20"}},
	{name: "geo: IPv6 ECS", qname: "lb-geo.glb.example.com.", qtype: dns.TypeA, ecs: "2001:db8:1::/48", scope: 48,
		flags: "qr aa", answer: []string{"lb-geo.glb.example.com. 20 IN A 192.0.2.20"}},
	{name: "off: ECS scope 0", qname: "lb-off.glb.example.com.", qtype: dns.TypeA, ecs: "198.51.100.0/24", scope: 0,
		flags: "qr aa", answer: []string{"lb-off.glb.example.com. 30 IN A 192.0.2.20"}},
	{name: "load balancer without the family: NODATA, scope 0", qname: "lb-v6.glb.example.com.", qtype: dns.TypeA, ecs: "198.51.100.0/24", scope: 0,
		flags: "qr aa", ns: []string{negSOA}},
	{name: "load balancer, other type: NODATA", qname: "lb-off.glb.example.com.", qtype: dns.TypeTXT, flags: "qr aa", ns: []string{negSOA}},
	{name: "hostname origin: CNAME", qname: "lb-cname.glb.example.com.", qtype: dns.TypeA, flags: "qr aa",
		answer: []string{"lb-cname.glb.example.com. 30 IN CNAME cdn.example.net."}},
	{name: "HTTPS: ECS in DE, hints as the A and AAAA answers", qname: "lb-https.glb.example.com.", qtype: dns.TypeHTTPS, ecs: "198.51.100.0/24", scope: 24,
		flags: "qr aa", answer: []string{`lb-https.glb.example.com. 20 IN HTTPS 1 . alpn="h2,h3" port="8443" ipv4hint="192.0.2.10" ipv6hint="2001:db8::10"`}},
	{name: "HTTPS: ECS in the US, IPv4 pool: no ipv6hint", qname: "lb-https.glb.example.com.", qtype: dns.TypeHTTPS, ecs: "203.0.113.0/24", scope: 24,
		flags: "qr aa", answer: []string{`lb-https.glb.example.com. 20 IN HTTPS 1 . alpn="h2,h3" port="8443" ipv4hint="192.0.2.20"`}},
	{name: "HTTPS: resolver address without ECS", qname: "lb-https.glb.example.com.", qtype: dns.TypeHTTPS, src: "203.0.113.7", procOnly: true,
		flags: "qr aa", answer: []string{`lb-https.glb.example.com. 20 IN HTTPS 1 . alpn="h2,h3" port="8443" ipv4hint="192.0.2.20"`}},
	{name: "HTTPS: followed from a CNAME", qname: "tohttps.glb.example.com.", qtype: dns.TypeHTTPS, ecs: "198.51.100.0/24", scope: 24,
		flags: "qr aa", answer: []string{"tohttps.glb.example.com. 300 IN CNAME lb-https.glb.example.com.",
			`lb-https.glb.example.com. 20 IN HTTPS 1 . alpn="h2,h3" port="8443" ipv4hint="192.0.2.10" ipv6hint="2001:db8::10"`}},
	{name: "HTTPS: load balancer without https: NODATA", qname: "lb-geo.glb.example.com.", qtype: dns.TypeHTTPS, ecs: "198.51.100.0/24", scope: 0,
		flags: "qr aa", ns: []string{negSOA}},
	{name: "HTTPS: the A answer is unchanged", qname: "lb-https.glb.example.com.", qtype: dns.TypeA, ecs: "198.51.100.0/24", scope: 24,
		flags: "qr aa", answer: []string{"lb-https.glb.example.com. 20 IN A 192.0.2.10"}},
	{name: "HTTPS: SVCB is not HTTPS: NODATA", qname: "lb-https.glb.example.com.", qtype: dns.TypeSVCB, flags: "qr aa", ns: []string{negSOA}},
	{name: "HTTPS: hostname origin: CNAME", qname: "lb-cname.glb.example.com.", qtype: dns.TypeHTTPS, flags: "qr aa",
		answer: []string{"lb-cname.glb.example.com. 30 IN CNAME cdn.example.net."}},
	{name: "hostname origin: CNAME for any type", qname: "lb-cname.glb.example.com.", qtype: dns.TypeTXT, flags: "qr aa",
		answer: []string{"lb-cname.glb.example.com. 30 IN CNAME cdn.example.net."}},

	{name: "EDNS: DO echoed", qname: "ns1.glb.example.com.", qtype: dns.TypeA, edns: true, do: true, flags: "qr aa",
		answer: []string{"ns1.glb.example.com. 300 IN A 192.0.2.53"}},
	{name: "EDNS: version 1 BADVERS", qname: "ns1.glb.example.com.", qtype: dns.TypeA, edns: true, version: 1, rcode: dns.RcodeBadVers, flags: "qr"},
	{name: "EDNS: small payload treated as 512", qname: "txt.glb.example.com.", qtype: dns.TypeTXT, edns: true, bufsize: 100, flags: "qr aa",
		answer: []string{`txt.glb.example.com. 120 IN TXT "hello world"`}},
	{name: "TC: no EDNS, over 512", qname: "big.glb.example.com.", qtype: dns.TypeTXT, flags: "qr aa tc"},
	{name: "TC: EDNS 4096 capped at 1232", qname: "big.glb.example.com.", qtype: dns.TypeTXT, edns: true, bufsize: 4096, flags: "qr aa tc"},
	{name: "TC: TCP answers in full", qname: "big.glb.example.com.", qtype: dns.TypeTXT, edns: true, tcp: true, flags: "qr aa", answer: bigTXT()},
	{name: "TC: load balancer of 60 origins over UDP", qname: "lb-all.glb.example.com.", qtype: dns.TypeAAAA, edns: true, flags: "qr aa tc"},
	{name: "TC: load balancer of 60 origins over TCP", qname: "lb-all.glb.example.com.", qtype: dns.TypeAAAA, edns: true, tcp: true, flags: "qr aa", answer: manyAAAA()},
}

func TestCasesInProcess(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, prometheus.NewRegistry())
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q, r := exchangeProc(t, s, &c)
			c.check(t, q, r)
		})
	}
}

func TestCasesOverSockets(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, prometheus.NewRegistry())
	addr := startServer(t, s)
	for _, c := range cases {
		if c.procOnly {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			q, r := exchangeNet(t, addr, &c)
			c.check(t, q, r)
		})
	}
}
