package main

import (
	"context"
	"fmt"
	"net/netip"

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

// Explanation is the body of GET /load_balancers/{id}/explain.
type Explanation struct {
	Revision int64  `json:"revision"`
	Client   string `json:"client"`
	ECS      string `json:"ecs,omitempty"`
	// LocatedBy is the prefix whose location steered: the ECS subnet when
	// the load balancer's prefer_ecs allows it, else the client address.
	LocatedBy string `json:"located_by"`
	// Decision is the whole trace; its client member is the location.
	Decision steering.Trace `json:"decision"`
}

func (e explainer) Explain(ctx context.Context, lbID string, client netip.Addr, ecs netip.Prefix, qtype string) (any, error) {
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
	locate, subnet, sourcePrefix := lb.ClientSubnet(client, ecs)
	loc := e.geo.Resolve(locate, c.nets)
	req := steering.Request{Client: loc, Subnet: subnet, SourcePrefix: sourcePrefix, Type: t}
	var ans steering.Answer
	out := Explanation{Revision: c.snap.Revision(), Client: client.String(), LocatedBy: locate.String()}
	if ecs.IsValid() {
		out.ECS = ecs.String()
	}
	c.snap.Decide(lb, &req, steering.FastRand{}, &ans, &out.Decision)
	return out, nil
}
