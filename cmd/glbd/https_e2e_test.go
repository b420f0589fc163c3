package main

import (
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// configureHTTPS creates over REST a signed zone and two geo load
// balancers that trust ECS, over pools of IPv4 and IPv6 origins picked by
// hash, one answer per family: app.glb.example.com with an https object,
// plain.glb.example.com without. Clients in 198.51.100.0/24 (DE) get the
// eu pool, everyone else the us pool.
func configureHTTPS(t *testing.T, g *glbd) string {
	t.Helper()
	zone := signedZone(t, g)
	origins := func(addrs ...string) []map[string]any {
		var out []map[string]any
		for _, a := range addrs {
			out = append(out, map[string]any{"name": a, "address": a})
		}
		return out
	}
	eu := g.must("POST", "/api/v1/pools", map[string]any{"name": "eu", "origin_steering": map[string]any{"policy": "hash"},
		"origins": origins("192.0.2.10", "192.0.2.11", "192.0.2.12", "2001:db8::10", "2001:db8::11", "2001:db8::12")})
	us := g.must("POST", "/api/v1/pools", map[string]any{"name": "us", "origin_steering": map[string]any{"policy": "hash"},
		"origins": origins("192.0.2.20", "2001:db8::20")})
	lb := func(name string, https any) map[string]any {
		body := map[string]any{
			"zone": zone["id"], "name": name, "steering_policy": "geo", "ttl": 45,
			"country_pools": map[string]any{"DE": []any{eu["id"]}},
			"default_pools": []any{us["id"]}, "fallback_pool": us["id"],
			"location_strategy": map[string]any{"prefer_ecs": "always"},
		}
		if https != nil {
			body["https"] = https
		}
		return body
	}
	g.must("POST", "/api/v1/load_balancers", lb("app.glb.example.com", map[string]any{"alpn": []string{"h2", "h3"}, "port": 8443}))
	g.must("POST", "/api/v1/load_balancers", lb("plain.glb.example.com", nil))
	if status := g.call("POST", "/api/v1/load_balancers", lb("bad.glb.example.com", map[string]any{"alpn": []string{"h2,h3"}, "port": 70000}), nil); status != 400 {
		t.Fatalf("a load balancer with a bad alpn and port: status %d, want 400", status)
	}
	return zone["id"].(string)
}

var (
	hintRE = regexp.MustCompile(`\b(ipv4hint|ipv6hint)="?([^" \t\n]+)"?`)
	// dig writes alpn=h2,h3 port=8443; kdig and miekg/dns quote values.
	alpnPortRE = regexp.MustCompile(`^alpn="?h2,h3"? port="?8443"? `)
	httpsRE    = regexp.MustCompile(`(?m)^app\.glb\.example\.com\.\s+(\d+)\s+IN\s+HTTPS\s+1 \. (.*)$`)
)

// httpsHints parses the one HTTPS record of a dig or kdig answer: its TTL,
// and its hints of both families, sorted.
func httpsHints(t *testing.T, out string) (ttl string, hints []string) {
	t.Helper()
	recs := httpsRE.FindAllStringSubmatch(out, -1)
	if len(recs) != 1 {
		t.Fatalf("want one HTTPS record 1 . for app.glb.example.com, got:\n%s", out)
	}
	if !alpnPortRE.MatchString(recs[0][2]) {
		t.Fatalf("HTTPS record %q lacks alpn h2,h3 and port 8443", recs[0][0])
	}
	for _, m := range hintRE.FindAllStringSubmatch(recs[0][2], -1) {
		hints = append(hints, strings.Split(m[2], ",")...)
	}
	slices.Sort(hints)
	return recs[0][1], hints
}

// TestHTTPSRecordEndToEnd: for clients of several subnets (ECS), dig's
// HTTPS answer carries as hints exactly the A and AAAA answers dig gets
// for the same subnet, with the load balancer's TTL; kdig parses the same
// record; a load balancer without https answers HTTPS with NODATA; and
// delv, with only the API's DS as trust anchor, fully validates the
// signed HTTPS answer, the NODATA and the hints of an ECS client.
func TestHTTPSRecordEndToEnd(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"delv", "kdig"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("this test needs %s (Debian/Ubuntu: apt-get install bind9-dnsutils knot-dnsutils)", tool)
		}
	}
	g := startGlbd(t, "", "--database-url", freshDatabase(t), "--node", "n1")
	zoneID := configureHTTPS(t, g)
	anchor := anchors(t, dsOf(t, g, zoneID))
	eventually(t, 10*time.Second, "the zone is served signed", func() (bool, string) {
		out := delv(t, g.dns, anchor, "glb.example.com", "SOA")
		return strings.Contains(out, "; fully validated\n"), out
	})

	subnets := []string{"198.51.100.0/28", "198.51.100.16/28", "198.51.100.32/28", "198.51.100.48/28",
		"198.51.100.64/28", "198.51.100.128/28", "198.51.100.200/29", "203.0.113.0/24", "2001:db8:1::/48"}
	distinct := map[string]bool{}
	for _, sn := range subnets {
		ecs := "+subnet=" + sn
		a, st := dig(t, g.dns, "app.glb.example.com", "A", ecs)
		aaaa, st6 := dig(t, g.dns, "app.glb.example.com", "AAAA", ecs)
		if st != "NOERROR" || st6 != "NOERROR" || len(a) != 1 || len(aaaa) != 1 {
			t.Fatalf("%s: A %v (%s), AAAA %v (%s): want one address of each", sn, a, st, aaaa, st6)
		}
		want := append(a, aaaa...)
		slices.Sort(want)
		out := digRaw(t, g.dns, ecs, "app.glb.example.com", "HTTPS")
		ttl, hints := httpsHints(t, out)
		if !slices.Equal(hints, want) || ttl != "45" {
			t.Fatalf("%s: dig HTTPS hints %v TTL %s, want %v (dig A + dig AAAA) TTL 45:\n%s", sn, hints, ttl, want, out)
		}
		if !strings.Contains(out, "CLIENT-SUBNET: "+sn+"/") {
			t.Errorf("%s: ECS not echoed with a scope:\n%s", sn, out)
		}
		host, port := splitHostPort(t, g.dns)
		kout, err := exec.Command("kdig", "@"+host, "-p", port, "+norec", "+subnet="+sn, "app.glb.example.com", "HTTPS").CombinedOutput()
		if err != nil {
			t.Fatalf("kdig: %v\n%s", err, kout)
		}
		if _, khints := httpsHints(t, string(kout)); !slices.Equal(khints, want) {
			t.Fatalf("%s: kdig parses hints %v, want %v:\n%s", sn, khints, want, kout)
		}
		distinct[strings.Join(want, " ")] = true
		t.Logf("%s: A %v AAAA %v, HTTPS hints %v", sn, a, aaaa, hints)
	}
	if len(distinct) < 3 {
		t.Fatalf("the subnets got only %d distinct answers: the comparison would hold by accident", len(distinct))
	}

	if got, st := dig(t, g.dns, "plain.glb.example.com", "HTTPS"); st != "NOERROR" || len(got) != 0 {
		t.Fatalf("HTTPS for a load balancer without https: %v %s, want NODATA", got, st)
	}

	out := delv(t, g.dns, anchor, "app.glb.example.com", "HTTPS")
	if !strings.Contains(out, "; fully validated\n") || !strings.Contains(out, "ipv4hint=192.0.2.20") || !strings.Contains(out, "ipv6hint=2001:db8::20") {
		t.Fatalf("delv HTTPS: want fully validated with the us hints, got:\n%s", out)
	}
	proxy := ecsProxy(t, g.dns, "198.51.100.0/28")
	a, _ := dig(t, g.dns, "app.glb.example.com", "A", "+subnet=198.51.100.0/28")
	out = delv(t, proxy, anchor, "app.glb.example.com", "HTTPS")
	if !strings.Contains(out, "; fully validated\n") || !strings.Contains(out, "ipv4hint="+a[0]) {
		t.Fatalf("delv HTTPS with ECS 198.51.100.0/28: want fully validated with ipv4hint=%s, got:\n%s", a[0], out)
	}
	out = delv(t, g.dns, anchor, "plain.glb.example.com", "HTTPS")
	if !strings.Contains(out, "; negative response, fully validated\n") {
		t.Fatalf("delv HTTPS for a load balancer without https: want a validated negative response, got:\n%s", out)
	}
}
