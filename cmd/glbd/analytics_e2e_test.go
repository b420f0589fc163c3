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
	db := freshDatabase(t)
	n1 := startGlbd(t, "", "--database-url", db, "--node", "n1", "--region", "WEU")
	n2 := startGlbd(t, "", "--database-url", db, "--node", "n2", "--region", "WEU", "--migrate=false")
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
	answerOf := func(n *glbd, name string, subnet netip.Prefix) string {
		got, status := dig(t, n.dns, name, "A", "+subnet="+subnet.String())
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
