package dnsserver

import (
	"testing"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
)

// TestLoadBalancerBelowCutIsReferred: the API refuses it, but a load
// balancer that ends up below a cut (a configuration from elsewhere) is
// not answered with AA from the parent.
func TestLoadBalancerBelowCutIsReferred(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	l := cfg.LoadBalancers[1]
	l.ID, l.Name = "hidden", "app.sub.glb.example.com"
	cfg.LoadBalancers = append(cfg.LoadBalancers, l)
	s := newTestServer(t, prometheus.NewRegistry())
	s.Publish(compileTest(t, cfg))
	c := tcase{qname: "app.sub.glb.example.com.", qtype: dns.TypeA, flags: "qr", ns: subNS, extra: subGlue}
	q, r := exchangeProc(t, s, &c)
	c.check(t, q, r)
}
