package steering

import (
	"math"
	"math/bits"
	"slices"
	"strings"

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
	// Measured is which client group's RUM figures ranked the pools, with
	// the figures (measured_latency only).
	Measured *TraceMeasured `json:"measured,omitempty"`
	// ECSScope is the scope prefix length echoed in an ECS reply.
	ECSScope          int  `json:"ecs_scope"`
	LocationDependent bool `json:"location_dependent"`
	// AllDown is the policy for when no candidate serves, and whether it
	// answered.
	AllDown TraceAllDown `json:"all_down"`
	// Safety lists the safety rules that no longer hold for the load
	// balancer with the shifts in force and the health of now.
	Safety []pools.ShiftHarm `json:"safety"`
	// Rollout is the rollout moving the default pools' order, when one
	// is part way, and which order this query drew.
	Rollout *TraceRollout `json:"rollout,omitempty"`
}

// TraceRollout is a pool order rollout in the decision.
type TraceRollout struct {
	ID      string  `json:"id"`
	Percent float64 `json:"percent"`
	// Order: "new" (the rollout's default_pools) or "old" (the load
	// balancer's own), drawn with percent the odds of new.
	Order string `json:"order"`
}

func (tr *Trace) order(lb *LB, staged bool) {
	t := &TraceRollout{ID: lb.staged.rollout, Percent: lb.staged.percent, Order: "old"}
	if staged {
		t.Order = "new"
	}
	tr.Rollout = t
}

// TraceAllDown is the load balancer's all_down policy in the decision.
type TraceAllDown struct {
	Action    string   `json:"action"`
	Addresses []string `json:"addresses,omitempty"`
	// Used: no candidate served and the policy answered.
	Used   bool   `json:"used"`
	Result string `json:"result,omitempty"`
}

// TraceShed is a pool's load shedding in the decision.
type TraceShed struct {
	Percent float64 `json:"percent"`
	Policy  string  `json:"policy"`
	// Shed: this query went on to the next candidate.
	Shed bool `json:"shed"`
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
	Known       bool   `json:"known"`
	Zone        string `json:"zone,omitempty"`
	Region      string `json:"region,omitempty"`
	Country     string `json:"country,omitempty"`
	Subdivision string `json:"subdivision,omitempty"`
	Continent   string `json:"continent,omitempty"`
	// ASN is the client's autonomous system (--geoip-asn-db), absent
	// when unknown.
	ASN          uint32   `json:"asn,omitempty"`
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
	// MeasuredMs is the RUM median that ranked the pool (measured_latency).
	MeasuredMs *float64 `json:"measured_ms,omitempty"`
	// Shifts in force that take this pool, or some of its origins, out of
	// traffic for this load balancer; ShiftedOrigins names those origins.
	Shifts         []string   `json:"shifts,omitempty"`
	ShiftedOrigins []string   `json:"shifted_origins,omitempty"`
	Shed           *TraceShed `json:"load_shedding,omitempty"`
	Chosen         bool       `json:"chosen"`
	Reason         string     `json:"reason,omitempty"`
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
	// Overloaded are origins left out because the load their feeds
	// report is at or above load_shedding.by_load.high.
	Overloaded []TraceLoad `json:"overloaded,omitempty"`
	Picked     []string    `json:"picked"`
}

// TraceLoad is an origin and the load its feeds report.
type TraceLoad struct {
	Name string  `json:"name"`
	Load float64 `json:"load"`
}

// TraceWeight is an eligible origin and its share of answers.
type TraceWeight struct {
	Name   string  `json:"name"`
	Weight float64 `json:"weight"`
	Share  float64 `json:"share"`
	// Load is what the origin's feeds report; ConfiguredWeight, when
	// load_shedding.by_load moved Weight, the weight as configured.
	Load             *float64 `json:"load,omitempty"`
	ConfiguredWeight *float64 `json:"configured_weight,omitempty"`
	// Note is what the origin's checks noted while healthy, such as a
	// certificate's days left.
	Note string `json:"note,omitempty"`
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
		Subdivision: c.Subdivision, Continent: c.Continent, ASN: c.ASN, Prefix: c.Prefix, SourcePrefix: req.SourcePrefix, QueryType: req.Type.String()}
	if c.HasCoordinates {
		lat, lon := c.Latitude, c.Longitude
		tr.Client.Latitude, tr.Client.Longitude = &lat, &lon
	}
	if req.Subnet.IsValid() {
		tr.Client.Subnet = req.Subnet.String()
	}
	tr.allDownPolicy(s, lb)
	tr.Records = []TraceRecord{}
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
			case pools.SteeringMeasuredLatency:
				if tr.Measured != nil && tr.Measured.Level == LevelRTT.String() {
					c.RTTMs = &k
				} else {
					c.MeasuredMs = &k
				}
			}
		}
		e := lb.shift.entry(pi)
		if e != nil {
			c.Shifts = e.ids
			c.ShiftedOrigins = s.names(p, e.origins)
			c.HealthyOrigins = bits.OnesCount64(p.healthy &^ e.origins)
			c.Healthy = s.serving(lb, pi) || e.whole && p.ok
		}
		switch {
		case !p.enabled:
			c.Reason = "pool disabled"
		case e != nil && e.whole:
			c.Reason = "shifted away (shift " + strings.Join(e.ids, ", ") + ")"
		case !c.Healthy && e != nil:
			c.Reason = "unhealthy: fewer healthy, unshifted eligible origins than minimum_origins"
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
	if sh := tr.Candidates[i].Shed; sh != nil && sh.Shed {
		tr.Candidates[i].Reason = "load shedding drew this query, but no later candidate serves: kept"
	}
	for j := i + 1; j < len(tr.Candidates); j++ {
		if tr.Candidates[j].Reason == "" {
			tr.Candidates[j].Reason = "not reached: an earlier pool was chosen"
		}
	}
}

func (tr *Trace) shed(i int, p *pool, shed bool) {
	policy := string(pools.ShedRandom)
	if p.shedHash {
		policy = string(pools.ShedHash)
	}
	tr.Candidates[i].Shed = &TraceShed{Percent: p.shedShare * 100, Policy: policy, Shed: shed}
	if shed {
		tr.Candidates[i].Reason = "load shedding passed this query on to the next serving candidate"
	}
}

func (tr *Trace) allDownPolicy(s *Snapshot, lb *LB) {
	tr.AllDown = TraceAllDown{Action: lb.allDown.String()}
	for _, a := range append(slices.Clone(lb.sorry4), lb.sorry6...) {
		tr.AllDown.Addresses = append(tr.AllDown.Addresses, a.String())
	}
	tr.Safety = s.SafetyNow(lb)
	if tr.Safety == nil {
		tr.Safety = []pools.ShiftHarm{}
	}
}

func (tr *Trace) allDown(lb *LB, req *Request, ans *Answer) {
	tr.AllDown.Used = true
	switch lb.allDown {
	case DownNoData:
		tr.AllDown.Result = "no candidate serves: NODATA (NOERROR, no answer, the SOA in authority)"
	case DownRefused:
		tr.AllDown.Result = "no candidate serves: REFUSED"
	case DownAddresses:
		tr.AllDown.Result = "no candidate serves: the sorry addresses"
		for _, a := range lb.Sorry(req.Type) {
			r := TraceRecord{Origin: "all_down", Type: "A", Value: a.String()}
			if a.Is6() {
				r.Type = "AAAA"
			}
			tr.Records = append(tr.Records, r)
		}
	}
	tr.Pool = TracePool{Reason: tr.AllDown.Result}
	none := []string{}
	tr.Affinity = TraceAffinity{Spillover: string(lb.spillover), SpilloverRatio: lb.ratio, ClientZone: req.Client.Zone,
		Compatible: req.Client.Zone != "", A: none, B: none, C: none, I: none, M: none, Result: "no pool answered: all_down"}
	tr.Origins = TraceOrigins{Policy: string(pools.OriginRandom), Family: tr.Client.QueryType, Eligible: []TraceWeight{}, Picked: none}
	tr.TTL, tr.ECSScope, tr.LocationDependent = ans.TTL, ans.Scope, ans.LocationDependent
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

func (tr *Trace) finish(s *Snapshot, lb *LB, p *pool, elig, overloaded uint64, ans *Answer) {
	tr.Pool = TracePool{ID: p.id, Name: p.name, Fallback: ans.Fallback, FailOpen: ans.FailOpen}
	switch {
	case ans.Fallback && lb.allDown == DownFallback && lb.shift != nil:
		tr.Pool.Reason = "no candidate serves (healthy and not shifted); all_down fallback: the fallback pool answers whatever its health"
		tr.AllDown.Used = true
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
		tw := TraceWeight{Name: o.Name, Weight: o.Weight, Share: o.Weight / total, Note: o.Note}
		if o.Loaded {
			l := o.Load
			tw.Load = &l
		}
		if o.Weight != o.ConfiguredWeight {
			w := o.ConfiguredWeight
			tw.ConfiguredWeight = &w
		}
		tr.Origins.Eligible = append(tr.Origins.Eligible, tw)
	}
	for m := overloaded; m != 0; m &= m - 1 {
		o := &p.origins[bits.TrailingZeros64(m)]
		tr.Origins.Overloaded = append(tr.Origins.Overloaded, TraceLoad{Name: o.Name, Load: o.Load})
	}
	if ans.Fallback {
		tr.AllDown.Used = true
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
