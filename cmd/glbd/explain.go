package main

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/geodata"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

// explainer runs the DNS path's decision for one client with a trace, on
// the snapshot the DNS server is serving.
type explainer struct {
	n   *node
	geo *geodata.Resolver
}

func (e explainer) Explain(ctx context.Context, lbID string, client netip.Addr, ecs netip.Prefix, qtype string) (*api.Explanation, error) {
	c := e.n.cur.Load()
	if c == nil {
		return nil, fmt.Errorf("no snapshot loaded yet: %w", pools.ErrUnavailable)
	}
	lb := c.snap.LoadBalancerByID(lbID)
	if lb == nil {
		for _, l := range c.snap.Config().LoadBalancers {
			if l.ID == lbID {
				return nil, &pools.ValidationError{Errors: []pools.FieldError{{Path: "id", Message: "load balancer is disabled: it is not served"}}}
			}
		}
		return nil, pools.ErrNotFound
	}
	t := steering.QTypeA
	if qtype == "AAAA" {
		t = steering.QTypeAAAA
	}
	req, locate := lb.NewRequest(client, ecs, t, geodata.Locator{Resolver: e.geo, Networks: c.nets})
	var ans steering.Answer
	out := &api.Explanation{Revision: c.snap.Revision(), Client: client.String(), LocatedBy: locate.String()}
	if ecs.IsValid() {
		out.ECS = ecs.String()
	}
	c.snap.Decide(lb, &req, steering.FastRand{}, &ans, &out.Decision)
	out.DNSSEC = explainDNSSEC(c.snap.Config(), lb.ZoneID())
	return out, nil
}

// snapshot is the snapshot the DNS server serves and how it locates a
// client subnet, for traffic previews.
func (e explainer) snapshot() (*steering.Snapshot, steering.Locator) {
	c := e.n.cur.Load()
	if c == nil {
		return nil, nil
	}
	return c.snap, geodata.Locator{Resolver: e.geo, Networks: c.nets}
}
