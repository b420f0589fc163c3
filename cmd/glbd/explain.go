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
	var req steering.Request
	locate := lb.FillRequest(&req, client, ecs, t, geodata.Locator{Resolver: e.geo, Networks: c.nets})
	var ans steering.Answer
	out := &api.Explanation{Revision: c.snap.Revision(), Client: client.String(), LocatedBy: locate.String()}
	if ecs.IsValid() {
		out.ECS = ecs.String()
	}
	c.snap.Decide(lb, &req, steering.FastRand{}, &ans, &out.Decision)
	out.DNSSEC = explainDNSSEC(c.snap.Config(), lb.ZoneID())
	out.Ignored = ignored(lb, ecs, locate, req.Client.Known(), locates(e.geo))
	return out, nil
}

// locates: the node has a City or Country database (an ASN database
// alone places no client).
func locates(r *geodata.Resolver) bool {
	for _, db := range r.Databases() {
		if db.Schema != geodata.SchemaASN {
			return true
		}
	}
	return false
}

// ignored says what the decision did without: an ECS subnet the load
// balancer's prefer_ecs set aside (or the client opted out with), and a
// client that no network or GeoIP entry placed.
func ignored(lb *steering.LB, ecs, locate netip.Prefix, known, geoip bool) []api.ExplainIgnored {
	out := []api.ExplainIgnored{}
	switch {
	case !ecs.IsValid():
	case ecs.Bits() == 0:
		out = append(out, api.ExplainIgnored{What: "ecs", Reason: fmt.Sprintf(
			"the ECS subnet %s has source prefix 0: the client opted out of ECS (RFC 7871 §7.1.2), so the resolver's address %s located it", ecs, locate.Addr())})
	case !lb.UseECS():
		why := map[pools.PreferECS]string{
			pools.PreferECSNever:     "never, so ECS is never used",
			pools.PreferECSAuto:      "auto (the default), which uses ECS whenever the answer depends on the client's location",
			pools.PreferECSProximity: "proximity, which uses ECS only with proximity steering",
			pools.PreferECSGeo:       "geo, which uses ECS only with geo steering",
		}[lb.PreferECS()]
		out = append(out, api.ExplainIgnored{What: "ecs", Setting: "location_strategy.prefer_ecs", Reason: fmt.Sprintf(
			"the ECS subnet %s was not used: prefer_ecs is %s, and this load balancer steers by %s; the resolver's address %s located the client. Set prefer_ecs to always (or to the steering policy) to locate clients by their subnet",
			ecs, why, lb.Policy(), locate.Addr())})
	}
	if !known {
		msg := fmt.Sprintf("no operator network and no GeoIP entry covers %s, so the client's location is unknown", locate)
		if !geoip {
			msg = fmt.Sprintf("no operator network covers %s and this node has no GeoIP database (--geoip-db), so the client's location is unknown", locate)
		}
		if lb.Policy() != pools.SteeringOff && lb.Policy() != pools.SteeringRandom {
			msg += fmt.Sprintf(": %s steering answers it from default_pools in their order", lb.Policy())
		}
		out = append(out, api.ExplainIgnored{What: "location", Reason: msg})
	}
	return out
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
