package steering

import (
	"math"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"github.com/gaissmai/bart"
)

// Measurements is what real users measured (RUM beacons), per client
// group and pool, as glbd aggregates the reports over its window. Pools
// are named by id. steering never collects or aggregates anything: it
// compiles this table into the snapshot and reads it per query.
type Measurements struct {
	// Networks are client networks (a /24 or /48 each).
	Networks []MeasuredGroup
	// Resolvers are resolver networks (/24 or /48), each with the figures
	// of the client networks behind it, weighted by their reports: a
	// query without ECS from such a resolver is steered for them.
	Resolvers []MeasuredGroup
	// ASNs are the networks' figures merged by the autonomous system the
	// ASN database places them in (none without one).
	ASNs []MeasuredGroup
	// Countries (ISO 3166 alpha-2) and Regions (Cloudflare's codes) are
	// the networks' figures merged by where the networks are.
	Countries []MeasuredGroup
	Regions   []MeasuredGroup
	// Built is when the figures were aggregated; Window the span of
	// reports they cover.
	Built  time.Time
	Window time.Duration
}

// MeasuredGroup is one client group's figures.
type MeasuredGroup struct {
	// Prefix names a network or resolver group, ASN an autonomous
	// system's, Key a country or region.
	Prefix netip.Prefix
	ASN    uint32
	Key    string
	Pools  []MeasuredPool
	// Behind lists, for a resolver, the client networks behind it and
	// how many reports tied each to it (for explain).
	Behind []MeasuredLink
}

// MeasuredPool is what one group's users measured of one pool.
type MeasuredPool struct {
	Pool     string  // pool id
	MedianMs float64 // median time to fetch the pool's probe object
	P75Ms    float64
	Samples  int
}

// MeasuredLink is a client network behind a resolver.
type MeasuredLink struct {
	Network netip.Prefix
	Reports int64
}

// Level is the client group whose measurements ranked the pools.
type Level uint8

const (
	LevelNone     Level = iota // configured order
	LevelResolver              // the networks behind the resolver (no ECS)
	LevelNetwork               // the client's /24 or /48
	LevelASN                   // the client's autonomous system
	LevelCountry
	LevelRegion
	LevelRTT // health-check RTT, as dynamic_latency
)

func (l Level) String() string {
	return [...]string{"none", "resolver", "network", "asn", "country", "region", "rtt"}[l]
}

// measured is Measurements compiled against a snapshot's pool indices.
type measured struct {
	src       *Measurements
	nets      bart.Table[int32] // → groups
	resolvers bart.Table[int32]
	asns      map[uint32]int32
	countries map[string]int32
	regions   [numRegions]int32 // -1: none
	groups    []mgroup
}

// mgroup is one group's figures by pool index, sorted by pool index.
type mgroup struct {
	level   Level
	src     *MeasuredGroup
	pools   []int32
	median  []float64
	samples []int32
}

// figure returns the median and samples of pool p in g (samples 0: none).
func (g *mgroup) figure(p int32) (float64, int32) {
	for i, q := range g.pools {
		if q == p {
			return g.median[i], g.samples[i]
		}
	}
	return 0, 0
}

// compileMeasured resolves m's pool ids to s's indices; figures of pools
// the snapshot does not have are left out.
func (s *Snapshot) compileMeasured(m *Measurements) *measured {
	if m == nil {
		return nil
	}
	c := &measured{src: m, asns: make(map[uint32]int32, len(m.ASNs)), countries: make(map[string]int32, len(m.Countries))}
	for i := range c.regions {
		c.regions[i] = -1
	}
	add := func(level Level, g *MeasuredGroup) int32 {
		mg := mgroup{level: level, src: g}
		for _, p := range g.Pools {
			idx, ok := s.poolByID[p.Pool]
			if !ok || p.Samples <= 0 {
				continue
			}
			mg.pools = append(mg.pools, idx)
			mg.median = append(mg.median, p.MedianMs)
			mg.samples = append(mg.samples, int32(min(p.Samples, 1<<30)))
		}
		c.groups = append(c.groups, mg)
		return int32(len(c.groups) - 1)
	}
	for i := range m.Networks {
		g := &m.Networks[i]
		c.nets.Insert(g.Prefix.Masked(), add(LevelNetwork, g))
	}
	for i := range m.Resolvers {
		g := &m.Resolvers[i]
		c.resolvers.Insert(g.Prefix.Masked(), add(LevelResolver, g))
	}
	for i := range m.ASNs {
		if g := &m.ASNs[i]; g.ASN != 0 {
			c.asns[g.ASN] = add(LevelASN, g)
		}
	}
	for i := range m.Countries {
		g := &m.Countries[i]
		c.countries[g.Key] = add(LevelCountry, g)
	}
	for i := range m.Regions {
		g := &m.Regions[i]
		if r := regionIndex(g.Key); r >= 0 {
			c.regions[r] = add(LevelRegion, g)
		}
	}
	return c
}

// Measurements is the RUM table the snapshot ranks measured_latency by
// (nil: none). Read only.
func (s *Snapshot) Measurements() *Measurements {
	if s.measured == nil {
		return nil
	}
	return s.measured.src
}

// Remeasure returns prev with the RUM table m in place of its own: a new
// snapshot that shares everything else (nothing is rebuilt), as the RUM
// table is replaced on a timer rather than with every report.
func Remeasure(prev *Snapshot, m *Measurements) *Snapshot {
	s := *prev
	s.gen, s.parent, s.rebuilt = generation.Add(1), prev.gen, []int32{}
	s.measured = s.compileMeasured(m)
	return &s
}

// groupFor finds the first group of the level order that ranks at least
// two of the candidates with min samples each: the resolver's networks
// (a query without ECS), the client's network, its autonomous system,
// its country, its region.
func (s *Snapshot) groupFor(lb *LB, req *Request, cands []int32) *mgroup {
	m := s.measured
	if m == nil {
		return nil
	}
	a := req.Subnet.Addr()
	if req.Subnet.IsValid() && req.SourcePrefix < 0 {
		if i, ok := m.resolvers.Lookup(a); ok && m.groups[i].ranks(cands, lb.rumMin) {
			return &m.groups[i]
		}
	}
	// An ECS subnet wider than a network says too little to use one.
	if req.Subnet.IsValid() && req.Subnet.Bits() >= networkBits(a) {
		if i, ok := m.nets.Lookup(a); ok && m.groups[i].ranks(cands, lb.rumMin) {
			return &m.groups[i]
		}
	}
	if a := req.Client.ASN; a != 0 {
		if i, ok := m.asns[a]; ok && m.groups[i].ranks(cands, lb.rumMin) {
			return &m.groups[i]
		}
	}
	if c := req.Client.Country; c != "" {
		if i, ok := m.countries[c]; ok && m.groups[i].ranks(cands, lb.rumMin) {
			return &m.groups[i]
		}
	}
	if r := regionIndex(req.Client.Region); r >= 0 {
		if i := m.regions[r]; i >= 0 && m.groups[i].ranks(cands, lb.rumMin) {
			return &m.groups[i]
		}
	}
	return nil
}

// ASName is how explain, the API and glbctl name an autonomous system:
// "AS64500".
func ASName(asn uint32) string { return "AS" + strconv.FormatUint(uint64(asn), 10) }

// networkBits is the length of the client networks RUM aggregates by.
func networkBits(a netip.Addr) int {
	if a.Is4() {
		return 24
	}
	return 48
}

// ranks: a ranking compares, so at least two candidates need min samples.
func (g *mgroup) ranks(cands []int32, minSamples int32) bool {
	n := 0
	for _, c := range cands {
		if _, k := g.figure(c); k >= minSamples {
			n++
		}
	}
	return n >= 2
}

// measuredOrder sorts cands by the median of the first group that ranks
// them (pools without min samples there follow in configured order) and
// reports whether one did; keys receive the medians.
func (s *Snapshot) measuredOrder(lb *LB, req *Request, cands []int32, keys []float64, tr *Trace) bool {
	g := s.groupFor(lb, req, cands)
	if tr != nil {
		tr.measuredLevel(s, lb, req, g)
	}
	if g == nil {
		return false
	}
	for i, c := range cands {
		keys[i] = math.Inf(1)
		if med, k := g.figure(c); k >= lb.rumMin {
			keys[i] = med
		}
	}
	sortByKey(cands, keys)
	return true
}

// TraceMeasured says which client group's RUM figures ranked the pools
// under measured_latency, or why none did.
type TraceMeasured struct {
	// Level: resolver, network, asn, country, region, or rtt (none had
	// min_samples for two candidates: health-check RTT ranked them).
	Level string `json:"level"`
	// Group names the deciding group: a network, "AS64500", a country or
	// region code.
	Group string `json:"group,omitempty"`
	// ASN is the autonomous system's number at the asn level.
	ASN        uint32 `json:"asn,omitempty"`
	MinSamples int    `json:"min_samples"`
	Reason     string `json:"reason"`
	// Pools are the group's figures for the candidates.
	Pools []TraceMeasuredPool `json:"pools"`
	// Behind: for the resolver level, the client networks behind it.
	Behind []TraceMeasuredLink `json:"behind,omitempty"`
	// Built is when the RUM table was aggregated, Window its span.
	Built  *time.Time `json:"built,omitempty"`
	Window string     `json:"window,omitempty"`
}

// TraceMeasuredPool is one candidate's figures at the deciding level.
type TraceMeasuredPool struct {
	Pool     string  `json:"pool"`
	Name     string  `json:"name"`
	MedianMs float64 `json:"median_ms"`
	P75Ms    float64 `json:"p75_ms"`
	Samples  int     `json:"samples"`
	// Counted: samples reach min_samples, so the median ranked the pool.
	Counted bool `json:"counted"`
}

// TraceMeasuredLink is a client network behind a resolver.
type TraceMeasuredLink struct {
	Network string `json:"network"`
	Reports int64  `json:"reports"`
}

func (tr *Trace) measuredLevel(s *Snapshot, lb *LB, req *Request, g *mgroup) {
	t := &TraceMeasured{Level: LevelRTT.String(), MinSamples: int(lb.rumMin), Pools: []TraceMeasuredPool{}}
	tr.Measured = t
	m := s.measured
	if m == nil {
		t.Reason = "no RUM table on this node: health-check RTT ranks the pools"
		return
	}
	t.Built, t.Window = &m.src.Built, m.src.Window.String()
	if g == nil {
		t.Reason = "no resolver, network, autonomous system, country or region has min_samples for two candidate pools: health-check RTT ranks the pools"
		return
	}
	t.Level = g.level.String()
	switch g.level {
	case LevelResolver:
		t.Group = g.src.Prefix.String()
		t.Reason = "query without ECS from a resolver whose clients' networks reported: steered for them, weighted by their reports"
		for _, l := range g.src.Behind {
			t.Behind = append(t.Behind, TraceMeasuredLink{Network: l.Network.String(), Reports: l.Reports})
		}
	case LevelNetwork:
		t.Group = g.src.Prefix.String()
		t.Reason = "the client's network has min_samples for two candidate pools"
	case LevelASN:
		t.Group, t.ASN = ASName(g.src.ASN), g.src.ASN
		t.Reason = "the client's autonomous system has min_samples for two candidate pools (its network had not)"
	case LevelCountry, LevelRegion:
		t.Group = g.src.Key
		t.Reason = "the client's " + g.level.String() + " has min_samples for two candidate pools (narrower levels had not)"
	}
	for _, p := range g.src.Pools {
		idx, ok := s.poolByID[p.Pool]
		if !ok || !slices.Contains(lb.defaults, idx) && (lb.order == nil || !slices.Contains(lb.order.defaults, idx)) {
			continue
		}
		t.Pools = append(t.Pools, TraceMeasuredPool{Pool: p.Pool, Name: s.pools[idx].name, MedianMs: p.MedianMs, P75Ms: p.P75Ms,
			Samples: p.Samples, Counted: int32(min(p.Samples, 1<<30)) >= lb.rumMin})
	}
}
