package steering

import (
	"math"
	"math/bits"

	"github.com/glb-dns/glb/pools"
)

// Trace records every step of one decision, for the explain endpoint and
// for tests. Filling it allocates; the DNS path passes nil.
type Trace struct {
	LoadBalancer TraceLB          `json:"load_balancer"`
	Client       TraceClient      `json:"client"`
	Candidates   []TraceCandidate `json:"candidates"`
	Pool         TracePool        `json:"pool"`
	Affinity     TraceAffinity    `json:"zonal_affinity"`
	Origins      TraceOrigins     `json:"origin_steering"`
	Records      []TraceRecord    `json:"records"`
	TTL          uint32           `json:"ttl"`
	// RTT is which region's round-trip times ranked the pools and why
	// (dynamic_latency only).
	RTT *TraceRTT `json:"rtt,omitempty"`
	// ECSScope is the scope prefix length echoed in an ECS reply.
	ECSScope          int  `json:"ecs_scope"`
	LocationDependent bool `json:"location_dependent"`
}

// TraceLB names the load balancer and its settings that mattered.
type TraceLB struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Policy  string `json:"steering_policy"`
	Answers int    `json:"answers"`
}

// TraceClient is the resolved client.
type TraceClient struct {
	Known        bool     `json:"known"`
	Zone         string   `json:"zone,omitempty"`
	Region       string   `json:"region,omitempty"`
	Country      string   `json:"country,omitempty"`
	Subdivision  string   `json:"subdivision,omitempty"`
	Continent    string   `json:"continent,omitempty"`
	Latitude     *float64 `json:"latitude,omitempty"`
	Longitude    *float64 `json:"longitude,omitempty"`
	Prefix       int      `json:"prefix"`
	Subnet       string   `json:"subnet,omitempty"`
	SourcePrefix int      `json:"ecs_source_prefix"`
	QueryType    string   `json:"query_type"`
}

// TraceCandidate is one candidate pool in order, with why it was passed
// over or chosen.
type TraceCandidate struct {
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	Source         string   `json:"source"`
	Enabled        bool     `json:"enabled"`
	Healthy        bool     `json:"healthy"`
	HealthyOrigins int      `json:"healthy_origins"`
	MinimumOrigins int      `json:"minimum_origins"`
	DistanceKm     *float64 `json:"distance_km,omitempty"`
	RTTMs          *float64 `json:"rtt_ms,omitempty"`
	Chosen         bool     `json:"chosen"`
	Reason         string   `json:"reason,omitempty"`
}

// TracePool is the chosen pool.
type TracePool struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Fallback bool   `json:"fallback"`
	FailOpen bool   `json:"fail_open"`
	Reason   string `json:"reason"`
}

// TraceAffinity shows the sets of SPEC §4 by origin name.
type TraceAffinity struct {
	Spillover      string   `json:"spillover"`
	SpilloverRatio float64  `json:"spillover_ratio"`
	ClientZone     string   `json:"client_zone"`
	Compatible     bool     `json:"compatible"`
	A              []string `json:"a"`
	B              []string `json:"b"`
	C              []string `json:"c"`
	I              []string `json:"i"`
	// Ratio is |I| / |C| when C is not empty.
	Ratio  *float64 `json:"ratio,omitempty"`
	M      []string `json:"m"`
	Result string   `json:"result"`
}

// TraceOrigins shows the origin steering draw.
type TraceOrigins struct {
	Policy   string        `json:"policy"`
	Family   string        `json:"family"`
	Eligible []TraceWeight `json:"eligible"`
	Picked   []string      `json:"picked"`
}

// TraceWeight is an eligible origin and its share of answers.
type TraceWeight struct {
	Name   string  `json:"name"`
	Weight float64 `json:"weight"`
	Share  float64 `json:"share"`
}

// TraceRecord is one record of the answer.
type TraceRecord struct {
	Origin string `json:"origin"`
	Type   string `json:"type"`
	Value  string `json:"value"`
}

func (tr *Trace) begin(s *Snapshot, lb *LB, req *Request) {
	*tr = Trace{LoadBalancer: TraceLB{ID: lb.id, Name: lb.name, Policy: string(lb.policy), Answers: lb.answers}}
	c := req.Client
	tr.Client = TraceClient{Known: c.Known(), Zone: c.Zone, Region: c.Region, Country: c.Country,
		Subdivision: c.Subdivision, Continent: c.Continent, Prefix: c.Prefix, SourcePrefix: req.SourcePrefix, QueryType: req.Type.String()}
	if c.HasCoordinates {
		lat, lon := c.Latitude, c.Longitude
		tr.Client.Latitude, tr.Client.Longitude = &lat, &lon
	}
	if req.Subnet.IsValid() {
		tr.Client.Subnet = req.Subnet.String()
	}
}

func (tr *Trace) candidates(s *Snapshot, lb *LB, req *Request, list []int32, geoLen int, geoSrc string, keys []float64) {
	for i, pi := range list {
		p := s.pools[pi]
		c := TraceCandidate{ID: p.id, Name: p.name, Enabled: p.enabled, Healthy: p.ok,
			HealthyOrigins: p.healthyCount, MinimumOrigins: p.minimum, Source: "default_pools"}
		switch {
		case i < geoLen && geoSrc == "country_pools":
			c.Source = "country_pools." + req.Client.Country
		case i < geoLen:
			c.Source = "region_pools." + req.Client.Region
		case lb.policy == pools.SteeringRandom && i == 0:
			c.Source = "default_pools (drawn first by random_steering)"
		}
		if i < len(keys) && !math.IsInf(keys[i], 1) && keys[i] != 0 {
			k := keys[i]
			switch lb.policy {
			case pools.SteeringProximity:
				km := chordKm(k)
				c.DistanceKm = &km
			case pools.SteeringDynamicLatency:
				c.RTTMs = &k
			}
		}
		switch {
		case !p.enabled:
			c.Reason = "pool disabled"
		case !p.ok:
			c.Reason = "unhealthy: fewer healthy eligible origins than minimum_origins"
		}
		tr.Candidates = append(tr.Candidates, c)
	}
}

// TraceRTT says whose RTT data dynamic_latency used.
type TraceRTT struct {
	// Region whose RTT ranked the pools; empty when none had data.
	Region string `json:"region,omitempty"`
	Reason string `json:"reason"`
}

func (tr *Trace) rttRegion(s *Snapshot, lb *LB, req *Request, r int) {
	t := &TraceRTT{}
	own := regionIndex(req.Client.Region) < 0
	var from string
	switch {
	case own && r < 0:
		t.Reason = "client location unknown and this node has no region (--region): configured order"
		tr.RTT = t
		return
	case own:
		from = "client location unknown: this node's region (--region) " + pools.Regions[r]
	default:
		from = "client's region " + pools.Regions[r]
	}
	switch eff := lb.dynRegion[r]; {
	case eff < 0:
		t.Reason = from + "; no pool has RTT data from any region: configured order"
	case int(eff) == r:
		t.Region = pools.Regions[eff]
		t.Reason = from
	default:
		t.Region = pools.Regions[eff]
		t.Reason = from + " has no RTT data; nearest region with data: " + pools.Regions[eff]
	}
	tr.RTT = t
}

func (tr *Trace) choose(i int) {
	tr.Candidates[i].Chosen = true
	for j := i + 1; j < len(tr.Candidates); j++ {
		tr.Candidates[j].Reason = "not reached: an earlier pool was chosen"
	}
}

func (s *Snapshot) names(p *pool, mask uint64) []string {
	out := []string{}
	for m := mask; m != 0; m &= m - 1 {
		out = append(out, p.origins[bits.TrailingZeros64(m)].Name)
	}
	return out
}

func (tr *Trace) affinity(s *Snapshot, lb *LB, p *pool, zone string, a, c, m uint64) {
	t := TraceAffinity{Spillover: string(lb.spillover), SpilloverRatio: lb.ratio, ClientZone: zone,
		Compatible: zone != "", A: s.names(p, a), B: s.names(p, p.configured), C: s.names(p, c),
		I: s.names(p, a&c), M: s.names(p, m)}
	switch {
	case lb.spillover == pools.AffinityDisabled:
		t.Result = "zonal affinity disabled: M = A"
	case zone == "":
		t.Result = "client zone unknown (not compatible): M = A"
	case c == 0:
		t.Result = "no zonal match (C empty): M = A"
	default:
		r := float64(bits.OnesCount64(a&c)) / float64(bits.OnesCount64(c))
		t.Ratio = &r
		switch {
		case m == a&c:
			t.Result = "stays in zone: M = I"
		case m == c:
			t.Result = "I empty, stay within zone: M = C"
		default:
			t.Result = "spills cross-zone: M = A"
		}
	}
	tr.Affinity = t
}

func (tr *Trace) finish(s *Snapshot, lb *LB, p *pool, elig uint64, ans *Answer) {
	tr.Pool = TracePool{ID: p.id, Name: p.name, Fallback: ans.Fallback, FailOpen: ans.FailOpen}
	switch {
	case ans.Fallback && ans.FailOpen:
		tr.Pool.Reason = "no candidate healthy; fallback pool unhealthy too: failing open on all its enabled origins"
	case ans.Fallback && !p.ok:
		tr.Pool.Reason = "no candidate healthy; fallback pool answers whatever its health"
	case ans.Fallback:
		tr.Pool.Reason = "no candidate healthy; fallback pool"
	default:
		tr.Pool.Reason = "first enabled, healthy candidate"
	}
	policy := "random"
	if p.hashPolicy {
		policy = "hash"
	}
	tr.Origins = TraceOrigins{Policy: policy, Family: tr.Client.QueryType, Eligible: []TraceWeight{}, Picked: []string{}}
	total := 0.0
	for m := elig; m != 0; m &= m - 1 {
		total += p.origins[bits.TrailingZeros64(m)].Weight
	}
	for m := elig; m != 0; m &= m - 1 {
		o := &p.origins[bits.TrailingZeros64(m)]
		tr.Origins.Eligible = append(tr.Origins.Eligible, TraceWeight{Name: o.Name, Weight: o.Weight, Share: o.Weight / total})
	}
	tr.Records = []TraceRecord{}
	for _, oi := range ans.Records() {
		o := s.Origin(oi)
		tr.Origins.Picked = append(tr.Origins.Picked, o.Name)
		r := TraceRecord{Origin: o.Name}
		switch {
		case o.IsHost():
			r.Type, r.Value = "CNAME", o.Host
		case o.Addr.Is4():
			r.Type, r.Value = "A", o.Addr.String()
		default:
			r.Type, r.Value = "AAAA", o.Addr.String()
		}
		tr.Records = append(tr.Records, r)
	}
	tr.TTL, tr.ECSScope, tr.LocationDependent = ans.TTL, ans.Scope, ans.LocationDependent
}
