package main

import (
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/glb-dns/glb/api"
)

// loadRun is one dnsperf run: queries for one name from one ECS subnet
// to one node, and what dnsperf says became of them.
type loadRun struct {
	node      *glbd
	name      string
	subnet    netip.Prefix
	completed int64
	lost      int64
}

// ecsOption is subnet as dnsperf's -E value: option 8 (RFC 7871), family,
// source prefix, scope 0, the address's significant bytes, in hex.
func ecsOption(subnet netip.Prefix) string {
	family, addr := 1, subnet.Addr().AsSlice()
	if subnet.Addr().Is6() {
		family = 2
	}
	return fmt.Sprintf("8:%04x%02x00%x", family, subnet.Bits(), addr[:(subnet.Bits()+7)/8])
}

var dnsperfStat = regexp.MustCompile(`Queries (completed|lost):\s+(\d+)`)

// run sends the name's A query at qps for d and records the counts.
func (r *loadRun) run(t *testing.T, d time.Duration, qps int) error {
	file := filepath.Join(t.TempDir(), "queries")
	if err := os.WriteFile(file, []byte(r.name+" A\n"), 0o600); err != nil {
		return err
	}
	host, port := splitHostPort(t, r.node.dns)
	out, err := exec.Command("dnsperf", "-s", host, "-p", port, "-d", file, "-E", ecsOption(r.subnet),
		"-l", strconv.Itoa(int(d/time.Second)), "-Q", strconv.Itoa(qps), "-t", "2").CombinedOutput()
	if err != nil {
		return fmt.Errorf("dnsperf: %v\n%s", err, out)
	}
	m := dnsperfStat.FindAllStringSubmatch(string(out), -1)
	if len(m) != 2 {
		return fmt.Errorf("dnsperf said no completed and lost counts:\n%s", out)
	}
	r.completed, _ = strconv.ParseInt(m[0][2], 10, 64)
	r.lost, _ = strconv.ParseInt(m[1][2], 10, 64)
	return nil
}

// analyticsOf reads GET /analytics with the query q.
func analyticsOf(t *testing.T, g *glbd, q url.Values) api.Analytics {
	t.Helper()
	var out struct {
		Result api.Analytics `json:"result"`
	}
	if status := g.call("GET", "/api/v1/analytics?"+q.Encode(), nil, &out); status != 200 {
		t.Fatalf("GET analytics?%s: status %d", q.Encode(), status)
	}
	return out.Result
}

// TestAnalyticsCountsDnsperf is the acceptance test of the answer
// counts: dnsperf sends a known number of queries for two load
// balancers from two ECS subnets (placed in WEU and ENAM by operator
// networks) to two nodes sharing PostgreSQL, and GET /analytics, merged,
// counts each pool, origin and region within 1 % of the queries
// answered (the test's own dig queries count too, a few dozen). Halfway, the origin answering the WEU subnet (hash
// steering: one origin per subnet) stops: every 10-second bucket that
// ended before it stopped counts only that origin, every bucket that
// began after both nodes answered the other counts only the other.
func TestAnalyticsCountsDnsperf(t *testing.T) {
	t.Parallel()
	origins := startOrigins(t, "127.0.4.1", "127.0.4.2", "127.0.4.3")
	n1, n2 := startTwoNodes(t, "--region", "WEU")
	g := n1
	zone := zoneFor(t, g)
	mon := fastMonitor(t, g, origins[0].port())
	eu := g.must("POST", "/api/v1/pools", map[string]any{"name": "eu", "monitor": mon, "origin_steering": map[string]any{"policy": "hash"},
		"origins": []map[string]any{{"name": "eu-a", "address": origins[0].ip()}, {"name": "eu-b", "address": origins[1].ip()}}})["id"].(string)
	us := g.must("POST", "/api/v1/pools", map[string]any{"name": "us", "monitor": mon,
		"origins": []map[string]any{{"name": "us-a", "address": origins[2].ip()}}})["id"].(string)
	weu, enam := netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("203.0.113.0/24")
	g.must("POST", "/api/v1/networks", map[string]any{"cidr": weu.String(), "region": "WEU", "country": "DE"})
	g.must("POST", "/api/v1/networks", map[string]any{"cidr": enam.String(), "region": "ENAM", "country": "US"})
	lbs := map[string]string{}
	for name, geo := range map[string]struct {
		region     string
		geo, deflt string
	}{"www": {"WEU", eu, us}, "api": {"ENAM", us, eu}} {
		lbs[name] = g.must("POST", "/api/v1/load_balancers", map[string]any{
			"zone": zone, "name": name + ".glb.example.com", "steering_policy": "geo",
			"region_pools": map[string]any{geo.region: []string{geo.geo}}, "default_pools": []string{geo.deflt}, "fallback_pool": geo.deflt,
			"location_strategy": map[string]any{"prefer_ecs": "always"},
		})["id"].(string)
	}
	byIP := map[string]string{origins[0].ip(): "eu-a", origins[1].ip(): "eu-b", origins[2].ip(): "us-a"}
	// The test's own queries are answers too, counted like dnsperf's: both
	// load balancers send WEU to eu and ENAM to us. (Left out, the probes
	// that watch the failover alone put www's WEU count 1.2 % over.)
	probes := map[string]map[string]int64{}
	answerOf := func(n *glbd, name string, subnet netip.Prefix) string {
		got, status := dig(t, n.dns, name, "A", "+subnet="+subnet.String())
		if status == "NOERROR" && len(got) > 0 {
			lb, key := lbs[name[:3]], eu+" WEU"
			if subnet == enam {
				key = us + " ENAM"
			}
			if probes[lb] == nil {
				probes[lb] = map[string]int64{}
			}
			probes[lb][key]++
		}
		if status != "NOERROR" || len(got) != 1 {
			return status
		}
		return byIP[got[0]]
	}
	var first string // the origin hash steering gives the WEU subnet
	eventually(t, 10*time.Second, "both nodes serve both load balancers", func() (bool, string) {
		first = answerOf(n1, "www.glb.example.com", weu)
		a, b, c := answerOf(n2, "www.glb.example.com", weu), answerOf(n1, "api.glb.example.com", enam), answerOf(n2, "www.glb.example.com", enam)
		return (first == "eu-a" || first == "eu-b") && a == first && b == "us-a" && c == "us-a", first + " " + a + " " + b + " " + c
	})
	other := map[string]string{"eu-a": "eu-b", "eu-b": "eu-a"}[first]

	var runs []*loadRun
	for _, n := range []*glbd{n1, n2} {
		for _, name := range []string{"www", "api"} {
			for _, subnet := range []netip.Prefix{weu, enam} {
				runs = append(runs, &loadRun{node: n, name: name + ".glb.example.com", subnet: subnet})
			}
		}
	}
	const loadFor, qps = 40 * time.Second, 60
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, len(runs))
	for i, r := range runs {
		wg.Go(func() { errs[i] = r.run(t, loadFor, qps) })
	}
	time.Sleep(loadFor / 3) // the failover falls in the middle of the load, whatever the signal
	stopped := time.Now()
	origins[map[string]int{"eu-a": 0, "eu-b": 1}[first]].stop()
	eventually(t, 10*time.Second, "both nodes answer the WEU subnet with the other origin", func() (bool, string) {
		a, b := answerOf(n1, "www.glb.example.com", weu), answerOf(n2, "www.glb.example.com", weu)
		return a == other && b == other, a + " " + b
	})
	moved := time.Now()
	wg.Wait()
	end := time.Now()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("failover: %s stopped at +%v, both nodes answered %s at +%v", first, stopped.Sub(start).Round(time.Millisecond), other, moved.Sub(start).Round(time.Millisecond))

	// What each load balancer answered, by pool and region.
	want := map[string]map[string]int64{}
	var sent int64
	for _, r := range runs {
		lb := lbs[r.name[:3]]
		if want[lb] == nil {
			want[lb] = map[string]int64{}
		}
		// Both load balancers send WEU to eu (its region pool, or the
		// default) and ENAM to us.
		key := eu + " WEU"
		if r.subnet == enam {
			key = us + " ENAM"
		}
		want[lb][key] += r.completed
		sent += r.completed + r.lost
		if r.lost > r.completed/200 {
			t.Logf("dnsperf %s %s to %s: %d lost of %d", r.name, r.subnet, r.node.dns, r.lost, r.completed+r.lost)
		}
	}
	for lb, byKey := range probes {
		for key, n := range byKey {
			want[lb][key] += n
		}
	}
	since := start.Add(-time.Minute).UTC().Format(time.RFC3339)
	eventually(t, 60*time.Second, "every node wrote the buckets of the run", func() (bool, string) {
		a := analyticsOf(t, n2, url.Values{"load_balancer": {lbs["www"]}, "since": {since}})
		return !a.CompleteUntil.Before(end.Add(10 * time.Second)), "complete until " + a.CompleteUntil.String()
	})
	for name, lb := range lbs {
		a := analyticsOf(t, n2, url.Values{"load_balancer": {lb}, "since": {since}, "group_by": {"pool,region"}})
		got := map[string]int64{}
		for _, g := range a.Totals {
			got[fmt.Sprint(g["pool"], " ", g["region"])] = int64(g["answers"].(float64))
		}
		t.Logf("%s: counted %v, answered %v", name, got, want[lb])
		for k, w := range want[lb] {
			if d := got[k] - w; d*100 > w || -d*100 > w {
				t.Errorf("%s %s: %d counted, %d answered (more than 1 %% apart)", name, k, got[k], w)
			}
		}
		for k, n := range got {
			if _, ok := want[lb][k]; !ok {
				t.Errorf("%s: %d answers counted under %s, which no query should give", name, n, k)
			}
		}
	}
	// The WEU answers of www by origin, 10 s at a time.
	a := analyticsOf(t, n1, url.Values{"load_balancer": {"www.glb.example.com"}, "since": {since}, "pool": {eu}, "group_by": {"origin"}, "step": {"10s"}})
	series := map[string][]api.AnalyticsPoint{}
	for _, s := range a.Series {
		series[s.Group["origin"]] = s.Points
	}
	var before, after int
	for i, p := range series[first] {
		bucketEnd := p.Time.Add(10 * time.Second)
		o := int64(0)
		if pts := series[other]; pts != nil {
			o = pts[i].Answers
		}
		t.Logf("bucket %s: %s %d, %s %d", p.Time.Format("15:04:05"), first, p.Answers, other, o)
		switch {
		case !bucketEnd.After(stopped) && p.Answers+o > 0:
			before++
			if o != 0 {
				t.Errorf("bucket %s ended before %s stopped, yet %s answered %d", p.Time, first, other, o)
			}
		case !p.Time.Before(moved) && p.Answers+o > 0:
			after++
			if p.Answers != 0 {
				t.Errorf("bucket %s began after both nodes answered %s, yet %s answered %d", p.Time, other, first, p.Answers)
			}
		}
	}
	if before == 0 || after == 0 {
		t.Errorf("%d buckets with answers wholly before the failover, %d wholly after; want some of each", before, after)
	}
	if sent == 0 {
		t.Fatal("dnsperf sent nothing")
	}
}

// loadFrom runs dnsperf for name from each subnet to each node at once,
// for d at qps per run, and fails the test when one fails.
func loadFrom(t *testing.T, nodes []*glbd, name string, subnets []netip.Prefix, d time.Duration, qps int) []*loadRun {
	t.Helper()
	var runs []*loadRun
	for _, n := range nodes {
		for _, subnet := range subnets {
			runs = append(runs, &loadRun{node: n, name: name, subnet: subnet})
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(runs))
	for i, r := range runs {
		wg.Go(func() { errs[i] = r.run(t, d, qps) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return runs
}

// previewReal asks n for the real-traffic preview of lb with edits: 409
// while nothing was sampled.
func previewReal(t *testing.T, n *glbd, lb string, edits map[string]any) (api.Preview, int) {
	t.Helper()
	var out struct {
		Result api.Preview `json:"result"`
	}
	status := n.call("POST", "/api/v1/load_balancers/"+lb+"/preview", map[string]any{"sample": "real", "edits": edits}, &out)
	if status != 200 && status != 409 {
		t.Fatalf("real-traffic preview of %s: status %d", lb, status)
	}
	return out.Result, status
}

// TestRealTrafficPreviewMatchesAnalytics is the acceptance test of the
// real-traffic preview: dnsperf's queries from eight subnets reach two
// nodes sharing PostgreSQL, which sample every one; the preview of a
// weight edit replays them, merged across the nodes, and says each
// origin's share after the edit; once the edit is applied, the same load
// gives each origin, by GET /analytics, its predicted share within 2
// points.
func TestRealTrafficPreviewMatchesAnalytics(t *testing.T) {
	t.Parallel()
	n1, n2 := startTwoNodes(t, "--sample-every", "1")
	g := n1
	zone := zoneFor(t, g)
	origins := []map[string]any{{"name": "a", "address": "192.0.2.1", "weight": 0.5}, {"name": "b", "address": "192.0.2.2", "weight": 0.5},
		{"name": "c", "address": "192.0.2.3", "weight": 0.5}}
	pool := g.must("POST", "/api/v1/pools", map[string]any{"name": "web", "origins": origins})["id"].(string)
	lb := g.must("POST", "/api/v1/load_balancers", map[string]any{"zone": zone, "name": "www.glb.example.com",
		"default_pools": []string{pool}, "fallback_pool": pool, "location_strategy": map[string]any{"prefer_ecs": "always"}})["id"].(string)
	var subnets []netip.Prefix
	for i := range 8 {
		subnets = append(subnets, netip.MustParsePrefix(fmt.Sprintf("198.51.%d.0/24", 100+i)))
	}
	nodes := []*glbd{n1, n2}
	eventually(t, 10*time.Second, "both nodes serve www", func() (bool, string) {
		_, s1 := dig(t, n1.dns, "www.glb.example.com", "A")
		_, s2 := dig(t, n2.dns, "www.glb.example.com", "A")
		return s1 == "NOERROR" && s2 == "NOERROR", s1 + " " + s2
	})
	const loadFor, qps = 10 * time.Second, 40
	var sampled int64
	for _, r := range loadFrom(t, nodes, "www.glb.example.com", subnets, loadFor, qps) {
		sampled += r.completed
	}
	// The edit: a 0.8, b 0.15, c 0.05.
	edited := []map[string]any{{"name": "a", "address": "192.0.2.1", "weight": 0.8}, {"name": "b", "address": "192.0.2.2", "weight": 0.15},
		{"name": "c", "address": "192.0.2.3", "weight": 0.05}}
	edits := map[string]any{"pools": map[string]any{pool: map[string]any{"origins": edited}}}
	var p api.Preview
	eventually(t, 100*time.Second, "both nodes wrote the minutes of the load", func() (bool, string) {
		var status int
		p, status = previewReal(t, n2, lb, edits)
		return status == 200 && p.Sample.Queries*100 >= sampled*99, fmt.Sprintf("%d %+v of %d", status, p.Sample, sampled)
	})
	if p.Sample.Subnets < len(subnets) || p.After == nil || len(p.Moves) != 0 { // the dig probes add the resolver's subnet
		t.Fatalf("preview: %+v", p)
	}
	predicted := p.After.ByName()
	t.Logf("real-traffic preview of %d queries from %d subnets: now %v, after %v; %s", p.Sample.Queries, p.Sample.Subnets, p.Now.ByName(), predicted, p.Summary)

	g.must("PATCH", "/api/v1/pools/"+pool, map[string]any{"origins": edited})
	for _, n := range nodes {
		eventually(t, 10*time.Second, "the node serves the edit", func() (bool, string) {
			e := explain(t, n, lb, "198.51.100.1")
			return len(e.Decision.Origins.Eligible) == 3 && e.Decision.Origins.Eligible[0].Weight == 0.8, fmt.Sprint(e.Decision.Origins.Eligible)
		})
	}
	// Count from the next bucket on: every answer in it is the edit's.
	since := time.Now().Truncate(10 * time.Second).Add(10 * time.Second)
	time.Sleep(time.Until(since)) // the load starts with the bucket, which is the clock's alone
	loadFrom(t, nodes, "www.glb.example.com", subnets, 2*loadFor, qps)
	end := time.Now()
	var a api.Analytics
	eventually(t, 60*time.Second, "every node wrote the buckets of the load", func() (bool, string) {
		a = analyticsOf(t, n1, url.Values{"load_balancer": {lb}, "since": {since.UTC().Format(time.RFC3339)}, "group_by": {"origin"}, "step": {"10s"}})
		return !a.CompleteUntil.Before(end.Add(10 * time.Second)), "complete until " + a.CompleteUntil.String()
	})
	for _, g := range a.Totals {
		name := g["origin"].(string)
		share := g["answers"].(float64) / float64(a.Answers)
		want := predicted["web/"+name]
		t.Logf("origin %s: %.3f of %d answers, predicted %.3f", name, share, a.Answers, want)
		if d := share - want; d > 0.02 || d < -0.02 {
			t.Errorf("origin %s: %.3f of the answers after the edit, the real-traffic preview said %.3f (more than 2 points apart)", name, share, want)
		}
	}
	if len(a.Totals) != 3 {
		t.Errorf("origins counted: %v", a.Totals)
	}
}
