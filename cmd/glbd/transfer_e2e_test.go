package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/internal/knottest"
	"github.com/glb-dns/glb/internal/nsdtest"
)

// soaSerial is the serial of a SOA answer line ("name ttl in soa mname
// rname serial ...").
func soaSerial(t *testing.T, r knottest.Reply) uint32 {
	t.Helper()
	if len(r.Answer) != 1 {
		return 0
	}
	f := strings.Fields(r.Answer[0])
	if len(f) < 7 {
		return 0
	}
	n, _ := strconv.ParseUint(f[6], 10, 32)
	return uint32(n)
}

// changesReach makes 20 API changes to the zone's records, each adding one
// TXT record to records, and checks that each is in the answers of the
// secondary on secPort within 2 s of the API's answer, and that the
// secondary's SOA serial is then glb's. It returns the records as they
// now are.
func changesReach(t *testing.T, g *glbd, zoneID, apex string, records []map[string]any, glbPort, secPort int, who string) []map[string]any {
	t.Helper()
	var slowest time.Duration
	for i := range 20 {
		name := fmt.Sprintf("c%d.%s", i, apex)
		records = append(records, map[string]any{"name": name, "type": "TXT", "content": fmt.Sprintf(`"change %d"`, i)})
		g.must("PATCH", "/api/v1/zones/"+zoneID, map[string]any{"records": records})
		took := eventually(t, 2*time.Second, fmt.Sprintf("change %d at %s", i, who), func() (bool, string) {
			r := knottest.Kdig(t, secPort, name, "TXT")
			return len(r.Answer) == 1, r.Status
		})
		slowest = max(slowest, took)
		gs := soaSerial(t, knottest.Kdig(t, glbPort, apex, "SOA"))
		if ss := soaSerial(t, knottest.Kdig(t, secPort, apex, "SOA")); gs != ss {
			t.Errorf("after change %d: glb's serial %d, %s's %d", i, gs, who, ss)
		}
	}
	t.Logf("slowest of 20 changes to reach %s: %v", who, slowest)
	return records
}

// TestKnotSecondary makes a real Knot the TSIG-authenticated secondary of
// a glb zone: after glb's NOTIFY it serves the zone at glb's serial; each
// of 20 API changes reaches Knot's answers within 2 s; an IXFR shows
// only the change; a health flip that changes a load balancer's
// fail-static answer reaches Knot within min_interval + 2 s; a client
// without the grant is REFUSED and learns nothing, a wrong key is NOTAUTH.
func TestKnotSecondary(t *testing.T) {
	knottest.NeedTool(t, "kdig", "knot-dnsutils")
	knottest.NeedTool(t, "knotd", "knot")
	g := startParallel(t)
	host, portS := splitHostPort(t, g.dns)
	glbPort, _ := strconv.Atoi(portS)
	knotPort := knottest.FreePort(t)

	key := g.must("POST", "/api/v1/tsig_keys", map[string]any{"name": "xfr", "algorithm": "hmac-sha256", "grants": []any{}})
	secret := key["secret"].(string)

	// Pool flip's origin 127.0.0.1 is healthy until the test flips it;
	// pool up's origin 127.0.0.2 stays healthy.
	var down atomic.Bool
	flip := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(flip.Close)
	ul, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	up := &httptest.Server{Listener: ul, Config: &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})}}
	up.Start()
	t.Cleanup(up.Close)
	pool := func(name, addr, url string) string {
		_, port := splitHostPort(t, strings.TrimPrefix(url, "http://"))
		p, _ := strconv.Atoi(port)
		mon := g.must("POST", "/api/v1/monitors", map[string]any{"type": "http", "path": "/", "port": p, "interval": 1, "timeout": 1,
			"retries": 0, "consecutive_down": 1, "consecutive_up": 1, "expected_codes": "200"})["id"].(string)
		return g.must("POST", "/api/v1/pools", map[string]any{"name": name, "monitor": mon,
			"origins": []map[string]any{{"name": name, "address": addr}}})["id"].(string)
	}
	poolFlip := pool("flip", "127.0.0.1", flip.URL)
	poolUp := pool("up", "127.0.0.2", up.URL)

	zone := g.must("POST", "/api/v1/zones", map[string]any{
		"name": "sec.example", "nameservers": []string{"ns1.sec.example"},
		"records": []map[string]any{{"name": "ns1.sec.example", "type": "A", "content": "192.0.2.53"}},
		"transfer": map[string]any{"allow": []string{"127.0.0.0/8"}, "tsig_keys": []string{"xfr"},
			"notify": []string{fmt.Sprintf("127.0.0.1:%d", knotPort)}, "min_interval": 1},
	})
	zoneID := zone["id"].(string)
	// The load balancer answers from pool flip while it is healthy, else
	// from pool up: its fail-static answer moves with flip's health.
	g.must("POST", "/api/v1/load_balancers", map[string]any{"zone": zoneID, "name": "www.sec.example", "ttl": 30,
		"default_pools": []string{poolFlip, poolUp}, "fallback_pool": poolUp})

	knot := knottest.StartAt(t, knotPort, func(dir string) string {
		return fmt.Sprintf(`key:
  - id: xfr
    algorithm: hmac-sha256
    secret: %s

remote:
  - id: glb
    address: %s@%d
    key: xfr

acl:
  - id: from_glb
    address: 127.0.0.0/8
    key: xfr
    action: notify

template:
  - id: default
    storage: %s
    zonefile-sync: -1
    zonefile-load: none
    journal-content: changes

zone:
  - domain: sec.example
    master: glb
    acl: from_glb
`, secret, host, glbPort, dir)
	}, "sec.example")

	glbSerial := func() uint32 { return soaSerial(t, knottest.Kdig(t, glbPort, "sec.example", "SOA")) }
	knotSerial := func() uint32 { return soaSerial(t, knottest.Kdig(t, knot.Port, "sec.example", "SOA")) }
	eventually(t, 10*time.Second, "Knot at glb's serial", func() (bool, string) {
		gs, ks := glbSerial(), knotSerial()
		return gs != 0 && gs == ks, fmt.Sprintf("glb %d, knot %d", gs, ks)
	})
	if r := knottest.Kdig(t, knot.Port, "www.sec.example", "A"); !slices.Equal(r.Answer, []string{"www.sec.example. 30 in a 127.0.0.1"}) {
		t.Errorf("Knot serves the load balancer as %q, want the healthy first pool's origin", r.Answer)
	}

	// 20 changes through the API, each in Knot's answers within 2 s.
	records := []map[string]any{{"name": "ns1.sec.example", "type": "A", "content": "192.0.2.53"}}
	records = changesReach(t, g, zoneID, "sec.example", records, glbPort, knot.Port, "Knot")

	// IXFR from the serial before one more change: only that change.
	before := glbSerial()
	records = append(records, map[string]any{"name": "last.sec.example", "type": "TXT", "content": `"last"`})
	g.must("PATCH", "/api/v1/zones/"+zoneID, map[string]any{"records": records})
	eventually(t, 5*time.Second, "the last change transferable", func() (bool, string) {
		s := glbSerial()
		return s != before, fmt.Sprint(s)
	})
	out, _ := exec.Command("kdig", "-y", "hmac-sha256:xfr:"+secret, "@"+host, "-p", portS, "+tcp", "sec.example", "IXFR="+strconv.FormatUint(uint64(before), 10)).CombinedOutput()
	var ixfr []string
	for _, l := range strings.Split(string(out), "\n") {
		if l != "" && !strings.HasPrefix(l, ";") && !slices.Contains(strings.Fields(l), "TSIG") {
			ixfr = append(ixfr, strings.Join(strings.Fields(l), " "))
		}
	}
	soas, others := 0, []string{}
	for _, l := range ixfr {
		if strings.Contains(l, " SOA ") {
			soas++
		} else {
			others = append(others, l)
		}
	}
	if soas != 4 || !slices.Equal(others, []string{`last.sec.example. 300 IN TXT "last"`}) {
		t.Errorf("IXFR from %d: %d SOAs and %q, want 4 SOAs and the one added record\n%s", before, soas, others, out)
	}

	// A health flip changes the load balancer's fail-static answer: Knot
	// has it within min_interval + 2 s of glb's own answer changing.
	down.Store(true)
	eventually(t, 15*time.Second, "glb answering from pool up", func() (bool, string) {
		r := knottest.Kdig(t, glbPort, "www.sec.example", "A")
		return slices.Equal(r.Answer, []string{"www.sec.example. 30 in a 127.0.0.2"}), fmt.Sprint(r.Answer)
	})
	eventually(t, 3*time.Second, "Knot answering from pool up", func() (bool, string) {
		r := knottest.Kdig(t, knot.Port, "www.sec.example", "A")
		return slices.Equal(r.Answer, []string{"www.sec.example. 30 in a 127.0.0.2"}), fmt.Sprint(r.Answer)
	})
	if gs, ks := glbSerial(), knotSerial(); gs != ks {
		t.Errorf("after the health flip: glb's serial %d, Knot's %d", gs, ks)
	}
	// The API shows the serial Knot was last sent.
	eventually(t, 5*time.Second, "the API showing Knot at glb's serial", func() (bool, string) {
		st := g.must("GET", "/api/v1/zones/"+zoneID+"/transfer", nil)
		secs, _ := st["secondaries"].([]any)
		if len(secs) != 1 {
			return false, fmt.Sprint(st)
		}
		sec := secs[0].(map[string]any)
		return sec["address"] == "127.0.0.1" && uint32(sec["serial"].(float64)) == glbSerial() && uint32(st["serial"].(float64)) == glbSerial(), fmt.Sprint(st)
	})

	// Without the key: REFUSED, nothing leaked. A wrong key: NOTAUTH.
	for _, typ := range []string{"AXFR", "IXFR=1"} {
		args := []string{"@" + host, "-p", portS, "+tcp", "sec.example", typ}
		out, _ := exec.Command("kdig", args...).CombinedOutput()
		if !strings.Contains(string(out), "REFUSED") || strings.Contains(string(out), "ns1.sec.example.") {
			t.Errorf("%s without the key:\n%s", typ, out)
		}
		wrong := append([]string{"-y", "hmac-sha256:xfr:" + "c2VjcmV0IHRoYXQgaXMgd3Jvbmc="}, args...)
		out, _ = exec.Command("kdig", wrong...).CombinedOutput()
		if !strings.Contains(string(out), "BADSIG") || strings.Contains(string(out), "ns1.sec.example.") {
			t.Errorf("%s with a wrong key:\n%s", typ, out)
		}
	}
	// The rcode of a wrong key, read off the wire: NOTAUTH (RFC 8945 §5.2).
	for _, qt := range []uint16{dns.TypeAXFR, dns.TypeIXFR} {
		m := new(dns.Msg)
		m.SetQuestion("sec.example.", qt)
		if qt == dns.TypeIXFR {
			m.Ns = []dns.RR{&dns.SOA{Hdr: dns.RR_Header{Name: "sec.example.", Rrtype: dns.TypeSOA, Class: dns.ClassINET}, Ns: ".", Mbox: ".", Serial: 1}}
		}
		m.SetTsig("xfr.", dns.HmacSHA256, 300, time.Now().Unix())
		raw, _, err := dns.TsigGenerate(m, "c2VjcmV0IHRoYXQgaXMgd3Jvbmc=", "", false)
		if err != nil {
			t.Fatal(err)
		}
		co, err := dns.Dial("tcp", g.dns)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := co.Write(raw); err != nil {
			t.Fatal(err)
		}
		_ = co.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, err := co.ReadMsgHeader(nil)
		co.Close()
		r := new(dns.Msg)
		if err != nil || r.Unpack(b) != nil {
			t.Fatalf("%s with a wrong key: %v", dns.TypeToString[qt], err)
		}
		if r.Rcode != dns.RcodeNotAuth || len(r.Answer) != 0 {
			t.Errorf("%s with a wrong key: %s, %d records", dns.TypeToString[qt], dns.RcodeToString[r.Rcode], len(r.Answer))
		}
	}
}

// TestNSDSecondary makes a real NSD the TSIG-authenticated secondary of a
// glb zone: after glb's NOTIFY it serves the zone at glb's serial, and
// each of 20 API changes reaches NSD's answers within 2 s at glb's serial.
func TestNSDSecondary(t *testing.T) {
	knottest.NeedTool(t, "kdig", "knot-dnsutils")
	knottest.NeedTool(t, "nsd", "nsd")
	g := startParallel(t)
	host, portS := splitHostPort(t, g.dns)
	glbPort, _ := strconv.Atoi(portS)
	nsdPort := knottest.FreePort(t)

	key := g.must("POST", "/api/v1/tsig_keys", map[string]any{"name": "xfr", "algorithm": "hmac-sha256", "grants": []any{}})
	secret := key["secret"].(string)
	records := []map[string]any{
		{"name": "ns1.nsd.example", "type": "A", "content": "192.0.2.53"},
		{"name": "www.nsd.example", "type": "A", "content": "192.0.2.80"},
	}
	zone := g.must("POST", "/api/v1/zones", map[string]any{
		"name": "nsd.example", "nameservers": []string{"ns1.nsd.example"}, "records": records,
		"transfer": map[string]any{"allow": []string{"127.0.0.1/32"}, "tsig_keys": []string{"xfr"},
			"notify": []string{fmt.Sprintf("127.0.0.1:%d", nsdPort)}},
	})
	zoneID := zone["id"].(string)

	nsd := nsdtest.StartAt(t, nsdPort, func(string) string {
		return fmt.Sprintf(`key:
    name: xfr
    algorithm: hmac-sha256
    secret: "%s"

zone:
    name: nsd.example
    zonefile: "nsd.example.zone"
    allow-notify: 127.0.0.1 xfr
    request-xfr: %s@%d xfr
`, secret, host, glbPort)
	}, "nsd.example")

	glbSerial := func() uint32 { return soaSerial(t, knottest.Kdig(t, glbPort, "nsd.example", "SOA")) }
	nsdSerial := func() uint32 { return soaSerial(t, knottest.Kdig(t, nsd.Port, "nsd.example", "SOA")) }
	eventually(t, 10*time.Second, "NSD at glb's serial", func() (bool, string) {
		gs, ns := glbSerial(), nsdSerial()
		return gs != 0 && gs == ns, fmt.Sprintf("glb %d, nsd %d", gs, ns)
	})
	if r := knottest.Kdig(t, nsd.Port, "www.nsd.example", "A"); !r.AA || !slices.Equal(r.Answer, []string{"www.nsd.example. 300 in a 192.0.2.80"}) {
		t.Errorf("NSD serves www as %q (aa %v), want glb's record, authoritatively", r.Answer, r.AA)
	}

	changesReach(t, g, zoneID, "nsd.example", records, glbPort, nsd.Port, "NSD")
}
