package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/miekg/dns"
)

// shiftWorld configures, through g: zone glb.example.com; pools primary
// (192.0.2.1 in zone-1, 192.0.2.2 in zone-2), secondary (198.51.100.1 in
// zone-1, 198.51.100.2 in zone-2) and fb (203.0.113.1); load balancer
// www over [primary, secondary], falling back to fb, with every eligible
// origin in its answers and the client located by ECS; and a network
// that puts 10.1.0.0/16 in zone-1. It returns the ids.
func shiftWorld(t *testing.T, g *glbd) map[string]string {
	t.Helper()
	zone := g.must("POST", "/api/v1/zones", map[string]any{
		"id": "example", "name": "glb.example.com", "nameservers": []string{"ns1.glb.example.com"},
		"records": []map[string]any{{"name": "ns1.glb.example.com", "type": "A", "content": "127.0.0.1"}},
	})
	g.must("POST", "/api/v1/pools", map[string]any{"id": "primary", "name": "primary", "origins": []map[string]any{
		{"name": "a1", "address": "192.0.2.1", "zone": "zone-1"}, {"name": "a2", "address": "192.0.2.2", "zone": "zone-2"},
	}})
	g.must("POST", "/api/v1/pools", map[string]any{"id": "secondary", "name": "secondary", "origins": []map[string]any{
		{"name": "b1", "address": "198.51.100.1", "zone": "zone-1"}, {"name": "b2", "address": "198.51.100.2", "zone": "zone-2"},
	}})
	g.must("POST", "/api/v1/pools", map[string]any{"id": "fb", "name": "fb", "origins": []map[string]any{
		{"name": "f", "address": "203.0.113.1"}, {"name": "f6", "address": "2001:db8::1"},
	}})
	g.must("POST", "/api/v1/networks", map[string]any{"cidr": "10.1.0.0/16", "zone": "zone-1"})
	g.must("POST", "/api/v1/load_balancers", map[string]any{
		"id": "www", "zone": zone["id"], "name": "www.glb.example.com",
		"default_pools": []string{"primary", "secondary"}, "fallback_pool": "fb", "answers": 0,
		"location_strategy": map[string]any{"prefer_ecs": "always"},
		"zonal_affinity":    map[string]any{"spillover": "ZONAL_AFFINITY_SPILL_CROSS_ZONE", "spillover_ratio": 0},
	})
	// The writes reach DNS through a snapshot, which a loaded machine
	// publishes later: until then www is NXDOMAIN on g.
	eventually(t, 10*time.Second, "www answered", func() (bool, string) {
		got := askWWW(t, g)
		return strings.HasPrefix(got, "NOERROR ") && len(got) > len("NOERROR "), got
	})
	return map[string]string{"zone": zone["id"].(string)}
}

func digWWW(t *testing.T, g *glbd, extra ...string) string {
	got, status := dig(t, g.dns, "www.glb.example.com", "A", extra...)
	return status + " " + strings.Join(got, ",")
}

// askWWW asks for www's A records from this process over a real socket,
// in the form digWWW returns: the timing checks must not wait for dig to
// start on a busy machine.
func askWWW(t *testing.T, g *glbd) string {
	m := new(dns.Msg)
	m.SetQuestion("www.glb.example.com.", dns.TypeA)
	r, _, err := (&dns.Client{Timeout: 2 * time.Second}).Exchange(m, g.dns)
	if err != nil {
		return "error: " + err.Error()
	}
	var got []string
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok {
			got = append(got, a.A.String())
		}
	}
	slices.Sort(got)
	return dns.RcodeToString[r.Rcode] + " " + strings.Join(got, ",")
}

// bothAnswer waits until both nodes answer want (asked from the test
// process, then confirmed with dig) and returns how long that took from
// since.
func bothAnswer(t *testing.T, since time.Time, within time.Duration, what, want string, nodes ...*glbd) time.Duration {
	t.Helper()
	var worst time.Duration
	for _, g := range nodes {
		eventually(t, within-time.Since(since), what+" on "+g.api, func() (bool, string) {
			got := askWWW(t, g)
			return got == want, got
		})
		worst = max(worst, time.Since(since))
	}
	for _, g := range nodes {
		if got := digWWW(t, g); got != want {
			t.Errorf("%s: dig on %s answers %s, want %s", what, g.api, got, want)
		}
	}
	t.Logf("%s: both nodes answer %s %v after it", what, want, worst.Round(time.Millisecond))
	return worst
}

func globalRevision(t *testing.T, url string) int64 {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var rev int64
	if err := conn.QueryRow(ctx, "select revision from glb_revision").Scan(&rev); err != nil {
		t.Fatal(err)
	}
	return rev
}

// TestShiftAcrossNodes: a 5 s shift away from the answering pool moves
// both nodes' answers to the next pool within 1 s of the write, and back
// within 1 s of its expiry, which no one writes; the expiry is audited
// once.
func TestShiftAcrossNodes(t *testing.T) {
	t.Parallel()
	url := freshDatabase(t)
	a := startGlbd(t, "", "--database-url", url, "--node", "a")
	b := startGlbd(t, "", "--database-url", url, "--node", "b", "--migrate=false")
	shiftWorld(t, a)
	const primary, secondary = "NOERROR 192.0.2.1,192.0.2.2", "NOERROR 198.51.100.1,198.51.100.2"
	bothAnswer(t, time.Now(), 5*time.Second, "configuration", primary, a, b)

	sh := a.must("POST", "/api/v1/shifts", map[string]any{"target": map[string]any{"pool": "primary"},
		"load_balancers": []string{"www"}, "reason": "bad deploy", "duration": "5s"})
	wrote := time.Now()
	expires, err := time.Parse(time.RFC3339Nano, sh["expires_at"].(string))
	if err != nil || sh["status"] != "active" {
		t.Fatalf("shift %v: %v", sh, err)
	}
	bothAnswer(t, wrote, time.Second, "shift started", secondary, a, b)
	rev := globalRevision(t, url)

	// Until the expiry both keep to the shift (a dig that started 100 ms
	// before it must see it)...
	for time.Until(expires) > 100*time.Millisecond {
		for _, g := range []*glbd{a, b} {
			asked := time.Now()
			if got := askWWW(t, g); got != secondary && expires.Sub(asked) > 100*time.Millisecond {
				t.Fatalf("%s answered %q %v before the expiry", g.api, got, expires.Sub(asked))
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	// ... and come back within a second of it, by each node's clock alone.
	bothAnswer(t, expires, time.Second, "shift expired", primary, a, b)
	if now := globalRevision(t, url); now != rev {
		t.Errorf("the configuration revision moved from %d to %d at the expiry: something was written", rev, now)
	}
	var got struct {
		Result map[string]any `json:"result"`
	}
	a.call("GET", "/api/v1/shifts/"+sh["id"].(string), nil, &got)
	if got.Result["status"] != "expired" {
		t.Errorf("after the expiry: %v", got.Result)
	}
	// The end is audited like the start: once, whichever node saw it.
	eventually(t, 5*time.Second, "expiry audited", func() (bool, string) {
		var log struct {
			Result []map[string]any `json:"result"`
		}
		a.call("GET", "/api/v1/audit?kind=shifts", nil, &log)
		var actions []string
		for _, e := range log.Result {
			actions = append(actions, e["action"].(string)+"/"+e["actor"].(string))
		}
		return slices.Equal(actions, []string{"expire/clock", "create/anonymous"}), strings.Join(actions, " ")
	})
}

// TestZoneShiftAndSafety: a zone shift takes exactly that zone's origins
// out of every pool and zonal affinity recomputes; a shift that would
// leave a load balancer without a serving steering pool is refused with
// 409 and changes nothing, unless an admin overrides it.
func TestZoneShiftAndSafety(t *testing.T) {
	t.Parallel()
	url := freshDatabase(t)
	a := startGlbd(t, "", "--database-url", url, "--node", "a", "--api-token", "boot")
	a.token = "boot"
	ids := shiftWorld(t, a)
	a.must("POST", "/api/v1/load_balancers", map[string]any{"id": "solo", "zone": ids["zone"], "name": "solo.glb.example.com",
		"default_pools": []string{"primary"}, "fallback_pool": "fb", "answers": 0})
	zone1 := "+subnet=10.1.2.0/24"
	eventually(t, 5*time.Second, "configuration", func() (bool, string) {
		got := digWWW(t, a, zone1)
		return got == "NOERROR 192.0.2.1", got
	})
	// Zone shift: zone-1's origins leave every pool.
	a.must("POST", "/api/v1/shifts", map[string]any{"target": map[string]any{"zone": "zone-1"}, "reason": "zone-1 network trouble", "duration": "1h"})
	eventually(t, time.Second, "zone shift", func() (bool, string) {
		got := digWWW(t, a, zone1)
		return got == "NOERROR 192.0.2.2", got
	})
	var ex struct {
		Result struct {
			Decision struct {
				Candidates []struct {
					Shifts         []string `json:"shifts"`
					ShiftedOrigins []string `json:"shifted_origins"`
				} `json:"candidates"`
				Affinity struct{ A, B, C, I, M []string } `json:"zonal_affinity"`
			} `json:"decision"`
		} `json:"result"`
	}
	a.call("GET", "/api/v1/load_balancers/www/explain?client=192.0.2.200&ecs=10.1.2.0/24", nil, &ex)
	d := ex.Result.Decision
	want := fmt.Sprint([]string{"a2"}, []string{"a1", "a2"}, []string{"a1"}, []string{}, []string{"a2"})
	if got := fmt.Sprint(d.Affinity.A, d.Affinity.B, d.Affinity.C, d.Affinity.I, d.Affinity.M); got != want {
		t.Errorf("sets A B C I M = %s, want %s", got, want)
	}
	if len(d.Candidates) == 0 || !slices.Equal(d.Candidates[0].ShiftedOrigins, []string{"a1"}) {
		t.Errorf("explain candidates %+v", d.Candidates)
	}
	if got, _ := dig(t, a.dns, "www.glb.example.com", "A", "+subnet=10.9.0.0/24"); !slices.Equal(got, []string{"192.0.2.2"}) {
		t.Errorf("a client of unknown zone got %v, want only the zone-2 origin", got)
	}

	// Safety: shifting primary leaves solo nothing: refused, nothing stored.
	var p struct {
		Type   string           `json:"type"`
		Detail string           `json:"detail"`
		Safety []map[string]any `json:"safety"`
	}
	body := map[string]any{"target": map[string]any{"pool": "primary"}, "reason": "bad deploy", "duration": "1h"}
	if st := a.call("POST", "/api/v1/shifts", body, &p); st != http.StatusConflict || p.Type != "urn:glb:problem:safety-rule" ||
		len(p.Safety) != 1 || p.Safety[0]["load_balancer"] != "solo" || p.Safety[0]["rule"] != "min_serving_pools" {
		t.Fatalf("refusal: %d %+v", st, p)
	}
	var list struct {
		Result []map[string]any `json:"result"`
	}
	a.call("GET", "/api/v1/shifts", nil, &list)
	if len(list.Result) != 1 {
		t.Fatalf("shifts after the refusal: %v", list.Result)
	}
	time.Sleep(300 * time.Millisecond) // a wrongly stored shift would show by now
	if got, _ := dig(t, a.dns, "solo.glb.example.com", "A"); !slices.Equal(got, []string{"192.0.2.2"}) {
		t.Errorf("solo after the refusal: %v", got)
	}
	body["override"] = true
	sh := a.must("POST", "/api/v1/shifts", body)
	if sh["override"] != true || len(sh["overridden"].([]any)) != 1 {
		t.Fatalf("override: %v", sh)
	}
	eventually(t, time.Second, "override in force", func() (bool, string) {
		got, st := dig(t, a.dns, "solo.glb.example.com", "A")
		return slices.Equal(got, []string{"203.0.113.1"}), st + strings.Join(got, ",")
	})
	var log struct {
		Result []map[string]any `json:"result"`
	}
	a.call("GET", "/api/v1/audit?kind=shifts&id="+sh["id"].(string), nil, &log)
	if len(log.Result) != 1 || log.Result[0]["actor"] != "bootstrap" || !strings.Contains(fmt.Sprint(log.Result[0]["after"]), "override:true") {
		t.Errorf("override audit: %v", log.Result)
	}
}

// TestAllDownPolicies: each all_down action seen with dig and in explain;
// the default fails open to the fallback pool.
func TestAllDownPolicies(t *testing.T) {
	t.Parallel()
	a := startGlbd(t, "", "--database-url", freshDatabase(t))
	shiftWorld(t, a)
	a.must("PATCH", "/api/v1/load_balancers/www", map[string]any{"safety": map[string]any{"min_serving_pools": 0}})
	// The rules are those of the configuration the node serves, which
	// follows the write within a second on a quiet machine; the deadline
	// is a loaded one's.
	for _, pool := range []string{"primary", "secondary"} {
		eventually(t, 10*time.Second, "shift of "+pool, func() (bool, string) {
			st := a.call("POST", "/api/v1/shifts", map[string]any{"target": map[string]any{"pool": pool}, "reason": "r", "duration": "1h"}, nil)
			return st == http.StatusCreated, fmt.Sprint(st)
		})
	}
	for _, tc := range []struct {
		allDown map[string]any
		status  string
		a, aaaa string
		soa     bool
	}{
		{nil, "NOERROR", "203.0.113.1", "2001:db8::1", false},
		{map[string]any{"action": "nodata"}, "NOERROR", "", "", true},
		{map[string]any{"action": "refused"}, "REFUSED", "", "", false},
		{map[string]any{"action": "nodata"}, "NOERROR", "", "", true}, // back from refused
		{map[string]any{"action": "addresses", "addresses": []string{"192.0.2.99", "2001:db8::99"}}, "NOERROR", "192.0.2.99", "2001:db8::99", false},
		{map[string]any{"action": "fallback", "addresses": nil}, "NOERROR", "203.0.113.1", "2001:db8::1", false},
	} {
		action := "fallback (default)"
		if tc.allDown != nil {
			action = tc.allDown["action"].(string)
			a.must("PATCH", "/api/v1/load_balancers/www", map[string]any{"all_down": tc.allDown})
		}
		want := strings.TrimSpace(tc.status + " " + tc.a)
		eventually(t, time.Second, action, func() (bool, string) {
			got := strings.TrimSpace(digWWW(t, a))
			return got == want, got
		})
		got, st := dig(t, a.dns, "www.glb.example.com", "AAAA")
		if st != tc.status || strings.Join(got, ",") != tc.aaaa {
			t.Errorf("%s AAAA: %s %v", action, st, got)
		}
		host, port := splitHostPort(t, a.dns)
		out, _ := exec.Command("dig", "@"+host, "-p", port, "+norec", "www.glb.example.com", "A").CombinedOutput()
		if hasSOA := strings.Contains(string(out), "AUTHORITY SECTION") && strings.Contains(string(out), "\tSOA\t"); hasSOA != tc.soa {
			t.Errorf("%s: SOA in authority %v, want %v:\n%s", action, hasSOA, tc.soa, out)
		}
		var ex struct {
			Result struct {
				Decision struct {
					AllDown struct {
						Action string `json:"action"`
						Used   bool   `json:"used"`
					} `json:"all_down"`
				} `json:"decision"`
			} `json:"result"`
		}
		a.call("GET", "/api/v1/load_balancers/www/explain?client=192.0.2.200", nil, &ex)
		if d := ex.Result.Decision.AllDown; !d.Used || tc.allDown != nil && d.Action != tc.allDown["action"] || tc.allDown == nil && d.Action != "fallback" {
			t.Errorf("%s: explain all_down %+v", action, d)
		}
	}
}

// TestLoadSheddingOverDNS: 30 % hash shedding moves 30 ± 3 % of 2,000
// ECS subnets to the next pool, each subnet always the same way; 30 %
// random moves 30 ± 3 % of 10,000 answers to one client.
func TestLoadSheddingOverDNS(t *testing.T) {
	t.Parallel()
	a := startGlbd(t, "", "--database-url", freshDatabase(t))
	shiftWorld(t, a)
	a.must("PATCH", "/api/v1/load_balancers/www", map[string]any{"zonal_affinity": map[string]any{"spillover": "ZONAL_AFFINITY_DISABLED"}})
	a.must("PATCH", "/api/v1/pools/primary", map[string]any{"load_shedding": map[string]any{"default_percent": 30, "default_policy": "hash"}})
	c := &dns.Client{Net: "udp", Timeout: 2 * time.Second}
	query := func(subnet net.IP, bits uint8) (*dns.Msg, error) {
		m := new(dns.Msg)
		m.SetQuestion("www.glb.example.com.", dns.TypeA)
		o := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
		o.SetUDPSize(1232)
		family := uint16(1)
		o.Option = append(o.Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: family, SourceNetmask: bits, Address: subnet})
		m.Extra = append(m.Extra, o)
		r, _, err := c.Exchange(m, a.dns)
		return r, err
	}
	ask := func(subnet net.IP, bits uint8) string {
		r, err := query(subnet, bits)
		if err != nil || len(r.Answer) == 0 {
			t.Fatalf("query: %v %v", err, r)
		}
		return r.Answer[0].(*dns.A).A.String()
	}

	shedShare := func(n int, subnet func(i int) net.IP) (float64, []string) {
		got := make([]string, n)
		shed := 0
		for i := range n {
			got[i] = ask(subnet(i), 24)
			if strings.HasPrefix(got[i], "198.51.100.") {
				shed++
			}
		}
		return float64(shed) * 100 / float64(n), got
	}
	eventually(t, 10*time.Second, "shedding configured", func() (bool, string) {
		pct, _ := shedShare(100, func(i int) net.IP { return net.IPv4(10, 2, byte(i), 0) })
		return pct > 0, fmt.Sprint(pct)
	})
	subnet := func(i int) net.IP { return net.IPv4(100, 64+byte(i>>8), byte(i), 0) }
	pct, first := shedShare(2000, subnet)
	if pct < 27 || pct > 33 {
		t.Errorf("hash: %.1f %% of 2,000 subnets shed, want 30 ± 3", pct)
	}
	_, again := shedShare(2000, subnet)
	for i := range first {
		if (first[i][:4] == "198.") != (again[i][:4] == "198.") {
			t.Fatalf("subnet %v went to %s, then to %s", subnet(i), first[i], again[i])
		}
	}
	t.Logf("hash shedding: %.1f %% of 2,000 subnets, each the same way twice", pct)

	a.must("PATCH", "/api/v1/pools/primary", map[string]any{"load_shedding": map[string]any{"default_percent": 30, "default_policy": "random"}})
	// The change has landed once one client is answered both ways, which
	// hash never does (a second's sleep stood in for this, too short on a
	// loaded machine, and hash then sheds one client 0 or 100 %); random
	// at 30 % answers 50 queries all alike once in 50 million.
	one := func(int) net.IP { return net.IPv4(100, 64, 0, 0) }
	eventually(t, 10*time.Second, "random shedding in effect", func() (bool, string) {
		pct, _ := shedShare(50, one)
		return pct > 0 && pct < 100, fmt.Sprintf("%.0f %% of 50 answers to one client shed", pct)
	})
	pct, _ = shedShare(10000, one)
	if pct < 27 || pct > 33 {
		t.Errorf("random: %.1f %% of 10,000 answers shed, want 30 ± 3", pct)
	}
	t.Logf("random shedding: %.1f %% of 10,000 answers to one client", pct)
}
