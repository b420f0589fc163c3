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
	LocatedBy string         `json:"located_by"`
	Location  ExplainedPlace `json:"location"`
	Decision  steering.Trace `json:"decision"`
}

// ExplainedPlace is the resolved location in full.
type ExplainedPlace struct {
	Known       bool     `json:"known"`
	Zone        string   `json:"zone,omitempty"`
	Region      string   `json:"region,omitempty"`
	Country     string   `json:"country,omitempty"`
	Subdivision string   `json:"subdivision,omitempty"`
	Continent   string   `json:"continent,omitempty"`
	Latitude    *float64 `json:"latitude,omitempty"`
	Longitude   *float64 `json:"longitude,omitempty"`
	Prefix      int      `json:"prefix"`
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
	out.Location = ExplainedPlace{Known: loc.Known(), Zone: loc.Zone, Region: loc.Region, Country: loc.Country,
		Subdivision: loc.Subdivision, Continent: loc.Continent, Prefix: loc.Prefix}
	if loc.HasCoordinates {
		lat, lon := loc.Latitude, loc.Longitude
		out.Location.Latitude, out.Location.Longitude = &lat, &lon
	}
	return out, nil
}
