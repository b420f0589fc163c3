package main

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// configureSigned creates over REST a signed zone with a static record and
// www.glb.example.com, a geo load balancer that trusts ECS: clients in
// 198.51.100.0/24 (DE) get 192.0.2.10, everyone else 192.0.2.20. Both
// pools are IPv4 only, so AAAA is NODATA.
func configureSigned(t *testing.T, g *glbd) string {
	t.Helper()
	zone := signedZone(t, g, map[string]any{"name": "txt.glb.example.com", "type": "TXT", "content": `"static"`})
	eu := g.must("POST", "/api/v1/pools", map[string]any{"name": "eu", "origins": []map[string]any{{"name": "eu1", "address": "192.0.2.10"}}})
	us := g.must("POST", "/api/v1/pools", map[string]any{"name": "us", "origins": []map[string]any{{"name": "us1", "address": "192.0.2.20"}}})
	g.must("POST", "/api/v1/load_balancers", map[string]any{
		"zone": zone["id"], "name": "www.glb.example.com", "steering_policy": "geo",
		"country_pools": map[string]any{"DE": []any{eu["id"]}},
		"default_pools": []any{us["id"]}, "fallback_pool": us["id"],
		"location_strategy": map[string]any{"prefer_ecs": "always"},
	})
	return zone["id"].(string)
}

// signedZone creates over REST the signed zone glb.example.com (TTL 60,
// negative answers 30 s) with ns1's address and records, and the network
// 198.51.100.0/24 in DE (WEU); it returns the zone.
func signedZone(t *testing.T, g *glbd, records ...map[string]any) map[string]any {
	t.Helper()
	zone := g.must("POST", "/api/v1/zones", map[string]any{
		"name": "glb.example.com", "nameservers": []string{"ns1.glb.example.com"}, "ttl": 60,
		"soa":     map[string]any{"minimum": 30},
		"dnssec":  map[string]any{"enabled": true},
		"records": append([]map[string]any{{"name": "ns1.glb.example.com", "type": "A", "content": "127.0.0.1"}}, records...),
	})
	g.must("POST", "/api/v1/networks", map[string]any{"cidr": "198.51.100.0/24", "country": "DE", "region": "WEU"})
	return zone
}

// dsOf reads the DS records the API offers for the parent.
func dsOf(t *testing.T, g *glbd, zoneID string) []string {
	t.Helper()
	st := g.must("GET", "/api/v1/zones/"+zoneID+"/dnssec", nil)
	var ds []string
	for _, d := range st["ds"].([]any) {
		ds = append(ds, d.(string))
	}
	if len(ds) == 0 || st["signing"] != true {
		t.Fatalf("no DS from the API: %v", st)
	}
	return ds
}

// anchors writes a delv trust anchor file holding only ds.
func anchors(t *testing.T, ds []string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("trust-anchors {\n")
	for _, s := range ds {
		rr, err := dns.NewRR(s)
		if err != nil {
			t.Fatalf("DS %q from the API does not parse: %v", s, err)
		}
		d := rr.(*dns.DS)
		b.WriteString("  " + d.Hdr.Name + " static-ds " + strings.Join([]string{
			itoa(int(d.KeyTag)), itoa(int(d.Algorithm)), itoa(int(d.DigestType)), `"` + d.Digest + `"`}, " ") + ";\n")
	}
	b.WriteString("};\n")
	f := filepath.Join(t.TempDir(), "anchors.conf")
	if err := os.WriteFile(f, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func itoa(i int) string { return strconv.Itoa(i) }

// delv asks server through BIND's validating lookup tool with anchor as
// the only trust anchor and returns its output.
func delv(t *testing.T, server, anchor, name, qtype string) string {
	t.Helper()
	host, port := splitHostPort(t, server)
	out, _ := exec.Command("delv", "@"+host, "-p", port, "-a", anchor, "+root=glb.example.com", name, qtype).CombinedOutput()
	return string(out)
}

// validated runs every answer shape of the acceptance through delv and
// fails unless each is fully validated.
func validated(t *testing.T, what, server, ecsProxy, anchor string) {
	t.Helper()
	for _, q := range []struct {
		server, name, qtype, want, data string
	}{
		{server, "www.glb.example.com", "A", "; fully validated", "192.0.2.20"},
		{ecsProxy, "www.glb.example.com", "A", "; fully validated", "192.0.2.10"},
		{server, "txt.glb.example.com", "TXT", "; fully validated", `"static"`},
		{server, "nope.glb.example.com", "A", "; negative response, fully validated", ""},
		{server, "www.glb.example.com", "AAAA", "; negative response, fully validated", ""},
		{server, "glb.example.com", "DNSKEY", "; fully validated", ""},
		{server, "glb.example.com", "SOA", "; fully validated", ""},
	} {
		out := delv(t, q.server, anchor, q.name, q.qtype)
		if !strings.Contains(out, q.want+"\n") || !strings.Contains(out, q.data) {
			via := ""
			if q.server == ecsProxy {
				via = " with ECS 198.51.100.0/24"
			}
			t.Fatalf("%s: delv %s %s%s: want %q and %q, got:\n%s", what, q.name, q.qtype, via, q.want, q.data, out)
		}
	}
}

// ecsProxy relays UDP queries to server with an EDNS Client Subnet option
// added, as a resolver that sends ECS would: delv itself cannot send one.
func ecsProxy(t *testing.T, server, subnet string) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	p := netip.MustParsePrefix(subnet)
	go func() {
		buf := make([]byte, 65535)
		cl := &dns.Client{Net: "udp", Timeout: 2 * time.Second, UDPSize: 1232}
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			q := new(dns.Msg)
			if q.Unpack(buf[:n]) != nil {
				continue
			}
			o := q.IsEdns0()
			if o == nil {
				q.SetEdns0(1232, false)
				o = q.IsEdns0()
			}
			o.Option = append(o.Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: uint8(p.Bits()), Address: p.Addr().AsSlice()})
			r, _, err := cl.Exchange(q, server)
			if err != nil {
				continue
			}
			if b, err := r.Pack(); err == nil {
				_, _ = pc.WriteTo(b, from)
			}
		}
	}()
	return pc.LocalAddr().String()
}

// dnskeyCount is how many DNSKEY records server answers at the apex.
func dnskeyCount(t *testing.T, server string) int {
	got, _ := dig(t, server, "glb.example.com", "DNSKEY")
	return len(got)
}

// soaSigner is the key tag of the RRSIG over the SOA that server answers.
func soaSigner(server string) uint16 {
	m := new(dns.Msg)
	m.SetQuestion("glb.example.com.", dns.TypeSOA)
	m.SetEdns0(1232, true)
	r, _, err := (&dns.Client{Timeout: 2 * time.Second}).Exchange(m, server)
	if err != nil {
		return 0
	}
	for _, rr := range r.Answer {
		if s, ok := rr.(*dns.RRSIG); ok {
			return s.KeyTag
		}
	}
	return 0
}

// activeTag is the tag of the zone's active key, from the API.
func activeTag(st map[string]any) uint16 {
	for _, k := range st["keys"].([]any) {
		if k := k.(map[string]any); k["state"] == "active" {
			return uint16(k["tag"].(float64))
		}
	}
	return 0
}

// TestDNSSECEndToEnd: with only the DS from the API as trust anchor, delv
// fully validates a load-balanced answer with and without ECS, a static
// record, NXDOMAIN, NODATA, DNSKEY and SOA; after a restart; on a second
// node of the same PostgreSQL; and at every step of a key rollover, with
// the DS of every step and with the old DS while its key is still there.
func TestDNSSECEndToEnd(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("delv"); err != nil {
		t.Fatal("this test needs delv (Debian/Ubuntu: apt-get install bind9-dnsutils)")
	}
	db := freshDatabase(t)
	g1 := startGlbd(t, "", "--database-url", db, "--node", "n1")
	zoneID := configureSigned(t, g1)
	ds := dsOf(t, g1, zoneID)
	anchor := anchors(t, ds)
	eventually(t, 10*time.Second, "node 1 signs", func() (bool, string) {
		out := delv(t, g1.dns, anchor, "glb.example.com", "SOA")
		return strings.Contains(out, "; fully validated\n"), out
	})
	validated(t, "node 1", g1.dns, ecsProxy(t, g1.dns, "198.51.100.0/24"), anchor)

	g2 := startGlbd(t, "", "--database-url", db, "--node", "n2")
	eventually(t, 10*time.Second, "node 2 serves the zone", func() (bool, string) {
		return dnskeyCount(t, g2.dns) == 1, ""
	})
	validated(t, "second node", g2.dns, ecsProxy(t, g2.dns, "198.51.100.0/24"), anchor)

	g1.stop()
	g1 = startGlbd(t, g1.dataDir, "--database-url", db, "--node", "n1")
	eventually(t, 10*time.Second, "node 1 serves after a restart", func() (bool, string) {
		return dnskeyCount(t, g1.dns) == 1, ""
	})
	validated(t, "node 1 after a restart", g1.dns, ecsProxy(t, g1.dns, "198.51.100.0/24"), anchor)
	if got := dsOf(t, g1, zoneID); strings.Join(got, ",") != strings.Join(ds, ",") {
		t.Fatalf("DS changed across a restart: %v, was %v", got, ds)
	}

	oldAnchor := anchor
	for _, step := range []struct {
		phase   string
		dnskeys int
		oldOK   bool // the pre-rollover DS still validates
	}{{"published", 2, true}, {"activated", 2, true}, {"idle", 1, false}} {
		st := g1.must("POST", "/api/v1/zones/"+zoneID+"/dnssec/rollover", map[string]any{"force": true})
		if ph := st["rollover"].(map[string]any)["phase"]; ph != step.phase {
			t.Fatalf("rollover step: phase %v, want %s", ph, step.phase)
		}
		for _, g := range []*glbd{g1, g2} {
			eventually(t, 10*time.Second, step.phase+": node serves the step", func() (bool, string) {
				n, tag := dnskeyCount(t, g.dns), soaSigner(g.dns)
				return n == step.dnskeys && tag == activeTag(st), fmt.Sprintf("%d DNSKEY, SOA signed by %d", n, tag)
			})
		}
		anchor := anchors(t, dsOf(t, g1, zoneID))
		for i, g := range []*glbd{g1, g2} {
			what := step.phase + " on node " + itoa(i+1)
			proxy := ecsProxy(t, g.dns, "198.51.100.0/24")
			validated(t, what, g.dns, proxy, anchor)
			if step.oldOK {
				validated(t, what+" with the old DS", g.dns, proxy, oldAnchor)
			}
		}
		t.Logf("rollover step %s: validated on both nodes with the API's DS", step.phase)
	}
}
