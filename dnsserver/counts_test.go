package dnsserver

import (
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/analytics"
	"github.com/glb-dns/glb/pools"
)

// TestAnswerCounts: each load balancer query counts once, in the bucket
// of its arrival, under the pool and origin that answered and the
// client's region and country (ECS subnets placed by the operator
// networks), with its response code; a query of a static name counts
// nothing, an HTTPS query counts the A decision its hints show, and a
// snapshot published mid-bucket (an epoch) names its own counts.
func TestAnswerCounts(t *testing.T) {
	c := analytics.NewCounts(0)
	s := newCountedServer(t, c, nil)
	w := newWorker()
	src := netip.MustParseAddr("192.0.2.200") // located by nothing
	ask := func(name string, qtype uint16, ecs string, n int) {
		q := benchQueryType(t, name, qtype, ecs)
		for range n {
			if w.handle(s, q, src, false) == nil {
				t.Fatal("no reply")
			}
		}
	}
	b := analytics.Bucket(time.Now())
	ask("lb-geo.glb.example.com.", dns.TypeA, "198.51.100.0/24", 7) // DE: eu, zone-a: eu1
	ask("lb-geo.glb.example.com.", dns.TypeA, "203.0.113.0/24", 3)  // US: us
	ask("lb-geo.glb.example.com.", dns.TypeA, "", 2)                // unknown: us
	ask("ns1.glb.example.com.", dns.TypeA, "", 5)
	ask("lb-https.glb.example.com.", dns.TypeHTTPS, "198.51.100.0/24", 1)
	ask("lb-cname.glb.example.com.", dns.TypeTXT, "", 1) // a hostname origin's CNAME
	// A new snapshot mid-bucket: the counts before and after are named by
	// their own snapshot and summed when the names agree.
	cfg := testConfig()
	cfg.Revision = 2
	s.Publish(compileTest(t, cfg))
	ask("lb-geo.glb.example.com.", dns.TypeA, "198.51.100.0/24", 4)
	if now := analytics.Bucket(time.Now()); now != b {
		t.Skipf("the queries spanned buckets %d and %d; the counts are split", b, now)
	}
	got := rowsText(c.Drain(b))
	want := `lb-cname cdn/cdn unknown unknown NOERROR 1
lb-geo eu/eu1 WEU DE NOERROR 11
lb-geo us/us1 WNAM US NOERROR 3
lb-geo us/us1 unknown unknown NOERROR 2
lb-https eu/eu1 WEU DE NOERROR 1`
	if got != want {
		t.Errorf("drained:\n%s\nwant:\n%s", got, want)
	}
	if again := c.Drain(b); len(again) != 0 {
		t.Errorf("drained twice: %v", again)
	}
}

// TestAnswerCountsRcodeAndAllDown: an all_down refused answer counts
// under no pool with REFUSED.
func TestAnswerCountsRcodeAndAllDown(t *testing.T) {
	c := analytics.NewCounts(0)
	s := newCountedServer(t, c, nil)
	cfg := testConfig()
	for i := range cfg.LoadBalancers {
		if cfg.LoadBalancers[i].ID == "lb-off" {
			cfg.LoadBalancers[i].AllDown = pools.AllDown{Action: pools.AllDownRefused}
		}
	}
	for i := range cfg.Pools {
		if cfg.Pools[i].ID == "us" {
			cfg.Pools[i].Enabled = false
		}
	}
	s.Publish(compileTest(t, cfg))
	w := newWorker()
	b := analytics.Bucket(time.Now())
	q := benchQuery(t, "lb-off.glb.example.com.", "")
	for range 3 {
		w.handle(s, q, netip.MustParseAddr("192.0.2.200"), false)
	}
	if now := analytics.Bucket(time.Now()); now != b {
		t.Skipf("the queries spanned buckets %d and %d", b, now)
	}
	if got, want := rowsText(c.Drain(b)), "lb-off / unknown unknown REFUSED 3"; got != want {
		t.Errorf("drained %q, want %q", got, want)
	}
}

// TestSampleKeepsQueries: one query in Every is kept with its load
// balancer, its client subnet cut to /24 (an ECS /32 too) and its type;
// static names are not sampled.
func TestSampleKeepsQueries(t *testing.T) {
	sample := analytics.NewSample(4, 2)
	s := newCountedServer(t, nil, sample)
	w := newWorker()
	start := time.Now().Truncate(time.Second)
	for _, q := range []struct {
		name  string
		qtype uint16
		ecs   string
	}{
		{"lb-geo.glb.example.com.", dns.TypeA, "198.51.100.7/32"}, {"lb-geo.glb.example.com.", dns.TypeA, "198.51.100.7/32"},
		{"ns1.glb.example.com.", dns.TypeA, ""}, {"lb-off.glb.example.com.", dns.TypeAAAA, ""}, {"lb-off.glb.example.com.", dns.TypeAAAA, ""},
	} {
		w.handle(s, benchQueryType(t, q.name, q.qtype, q.ecs), netip.MustParseAddr("192.0.2.200"), false)
	}
	got := sample.Recent(start)
	if len(got) != 2 {
		t.Fatalf("sampled %+v, want 2 of the 4 load balancer queries", got)
	}
	for i, want := range []analytics.SampledQuery{
		{LB: analytics.LBKey("lb-geo"), Subnet: netip.MustParsePrefix("198.51.100.0/24"), Type: dns.TypeA},
		{LB: analytics.LBKey("lb-off"), Subnet: netip.MustParsePrefix("192.0.2.0/24"), Type: dns.TypeAAAA},
	} {
		if g := got[i]; g.LB != want.LB || g.Subnet != want.Subnet || g.Type != want.Type || g.At.Before(start) {
			t.Errorf("sample %d: %+v, want %+v", i, g, want)
		}
	}
	if later := sample.Recent(time.Now().Add(time.Minute)); len(later) != 0 {
		t.Errorf("since a minute from now: %+v", later)
	}
}
