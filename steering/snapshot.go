package steering

import (
	"fmt"
	"hash/fnv"
	"math"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/glb-dns/glb/pools"
)

// Snapshot is an immutable, compiled view of the whole configuration and
// the health of every origin. Build one with Compile; never modify it.
type Snapshot struct {
	revision int64
	cfg      *pools.Config
	health   *pools.Health
	built    time.Time

	lbs []*LB
	// lbIndex finds a load balancer in lbs by name. Positions outlive the
	// load balancers recompiled at them, so Update shares the index while
	// the names keep their places.
	lbIndex map[string]int32
	// pools by index; a pool deleted by Update leaves an empty slot (id
	// "") so that the indices held by load balancers stay valid.
	// Pointers: Update copies the list for every change, and a pointer is
	// all it needs to copy of a pool it keeps.
	pools    []*pool
	poolByID map[string]int32
	// region is the answering node's region index (-1: none), which
	// dynamic_latency uses for clients of unknown location.
	region int
	// gen identifies this snapshot and parent the one Update started from,
	// so that a consumer can reuse what it built for the parent without
	// the snapshot keeping its ancestors alive.
	gen, parent uint64
	// rebuilt lists the pool indices Update compiled afresh (nil after a
	// full Compile: everything is new).
	rebuilt []int32
	// now is the clock shifts are judged by (Options.Now).
	now func() time.Time
	// nextShift is the next start or end of a shift after built.
	nextShift time.Time
	// orders are the rollouts of a pool order in force at built, by load
	// balancer id (nil: none).
	orders map[string]*pools.Rollout
	// measured is the RUM table measured_latency ranks by (nil: none).
	measured *measured
}

// originStride is the number of origin slots per pool in the global origin
// index: origin j of pool i is i*originStride + j, so that recompiling one
// pool renumbers nothing else.
const originStride = pools.MaxOriginsPerPool

// Origin is one origin of one pool, as compiled.
type Origin struct {
	Pool int32 // index of its pool
	Name string
	// Addr is set for an IP origin; Host (fully qualified, trailing dot)
	// for a hostname origin, which answers with a CNAME.
	Addr netip.Addr
	Host string
	// Weight is what the origin draws with: its configured weight
	// (ConfiguredWeight), moved by load_shedding.by_load when its pool
	// sheds by the load its feeds report (Load, when Loaded).
	Weight           float64
	ConfiguredWeight float64
	Load             float64
	Loaded           bool
	Zone             string
	Enabled          bool
	Healthy          bool
	Reason           string // why not healthy
	Note             string // what a healthy origin's checks noted (explain shows it)
	hash             uint64 // rendezvous hashing key, stable across snapshots
}

// IsHost reports whether the origin is a hostname (CNAME) origin.
func (o *Origin) IsHost() bool { return o.Host != "" }

type zoneMask struct {
	zone string
	mask uint64 // configured origins of the pool in this zone
}

type pool struct {
	id, name string
	// rev and modified identify the configuration the pool was compiled
	// from, so that Update can tell a pool it may reuse.
	rev      int64
	modified time.Time
	enabled  bool
	first    int32 // global index of origins[0]: the pool index × originStride
	n        int32
	origins  []Origin
	// configured: enabled, weight > 0. healthy: configured and healthy.
	configured, healthy uint64
	// v4, v6, hosts: configured origins by address family.
	v4, v6, hosts uint64
	healthyCount  int
	minimum       int
	ok            bool // enabled and at least minimum healthy origins
	hashPolicy    bool
	hasCoords     bool
	// xyz is the pool's position as a unit vector: proximity ranks pools
	// by a dot product, with no trigonometry per pool per query.
	xyz   [3]float64
	zones []zoneMask
	// staged: the rollout step its weights were compiled at.
	staged staging
	// rtt per region index (0 = no data) for dynamic_latency.
	rtt [numRegions]time.Duration
	// shedShare of the queries that would come here go on to the next
	// candidate (load_shedding), drawn at random or by the client subnet.
	shedShare float64
	shedHash  bool
	idHash    uint64
	// overloaded: healthy origins whose fed load is at or above
	// load_shedding.by_load.high; they take no answer while another
	// eligible origin can (load.go).
	overloaded uint64
}

// LB is a compiled load balancer.
type LB struct {
	id, name, zoneID string
	rev              int64
	modified         time.Time
	ttl              uint32
	policy           pools.SteeringPolicy // resolved: never empty
	preferECS        pools.PreferECS
	defaults         []int32
	fallback         int32
	regionPools      [numRegions][]int32
	countryPools     map[string][]int32
	// randomWeights[i] is the weight of defaults[i] for random steering.
	randomWeights []float64
	spillover     pools.Spillover
	ratio         float64
	answers       int
	// dynRegion[r] is the region whose RTT data ranks pools for a client
	// in region r: r itself if any pool has data there, else the nearest
	// region that has; -1 when no region has data.
	dynRegion [numRegions]int8
	// rumMin is rum.min_samples: a pool's samples at a level count from it.
	rumMin int32
	// locationDependent: the pool order or the origin set depends on where
	// the client is, whatever the health (ECS scope rule, §2 step 8).
	locationDependent bool
	// all is every pool the load balancer refers to, each once, ascending.
	all []int32
	// shift is what the shifts in force take from this load balancer's
	// pools; nil when none touches it.
	shift *shiftOverlay
	// sheds: one of its pools has load shedding. With it false and shift
	// nil, Decide takes the first healthy candidate as it did before
	// traffic controls existed. A pool's change recompiles every load
	// balancer that uses it, so the flag cannot go stale.
	sheds bool
	// allDown is what is answered when no candidate serves; sorry4 and
	// sorry6 are the addresses of DownAddresses.
	allDown        Down
	sorry4, sorry6 []netip.Addr
	// https is the load balancer's HTTPS record settings, nil for none.
	https *pools.HTTPSRecord
	// staged is the rollout step its order was compiled at (Update
	// recompiles it when the step moves); order the staged order while
	// the rollout is part way, nil otherwise.
	staged staging
	order  *stagedOrder
}

// Down is what a load balancer answers when none of its candidate pools
// serves (all_down.action).
type Down uint8

const (
	// DownFallback: the fallback pool, whatever its health (the default).
	DownFallback Down = iota
	// DownNoData: NOERROR, no answer, the SOA in authority.
	DownNoData
	// DownRefused: REFUSED.
	DownRefused
	// DownAddresses: the sorry addresses (LB.Sorry).
	DownAddresses
)

func (d Down) String() string {
	switch d {
	case DownNoData:
		return string(pools.AllDownNoData)
	case DownRefused:
		return string(pools.AllDownRefused)
	case DownAddresses:
		return string(pools.AllDownAddresses)
	}
	return string(pools.AllDownFallback)
}

// Sorry returns the all_down addresses of the family asked (nil for other
// types).
func (l *LB) Sorry(t QType) []netip.Addr {
	switch t {
	case QTypeA:
		return l.sorry4
	case QTypeAAAA:
		return l.sorry6
	}
	return nil
}

// Pools lists the indices of every pool the load balancer refers to (its
// defaults, fallback, region and country pools), each once, in ascending
// order. Read only.
func (l *LB) Pools() []int32 { return l.all }

func (l *LB) ID() string     { return l.id }
func (l *LB) Name() string   { return l.name }
func (l *LB) ZoneID() string { return l.zoneID }
func (l *LB) TTL() uint32    { return l.ttl }

// HTTPS is the load balancer's HTTPS record settings, nil when it answers
// none. Read only.
func (l *LB) HTTPS() *pools.HTTPSRecord { return l.https }

// Policy is the effective steering policy (the default resolved).
func (l *LB) Policy() pools.SteeringPolicy { return l.policy }

// UseECS reports whether an EDNS Client Subnet, when present, locates the
// client instead of the resolver's address (location_strategy.prefer_ecs).
func (l *LB) UseECS() bool {
	switch l.preferECS {
	case pools.PreferECSAuto:
		return l.locationDependent
	case pools.PreferECSAlways:
		return true
	case pools.PreferECSGeo:
		return l.policy == pools.SteeringGeo
	case pools.PreferECSProximity:
		return l.policy == pools.SteeringProximity
	}
	return false
}

// PreferECS is the load balancer's location_strategy.prefer_ecs, the
// setting UseECS decides by.
func (l *LB) PreferECS() pools.PreferECS { return l.preferECS }

// Revision is the configuration revision the snapshot was built from.
func (s *Snapshot) Revision() int64 { return s.revision }

// Config is the configuration the snapshot was built from. Read only.
func (s *Snapshot) Config() *pools.Config { return s.cfg }

// Health is the health view the snapshot was built from. Read only.
func (s *Snapshot) Health() *pools.Health { return s.health }

// Built is when the snapshot was compiled.
func (s *Snapshot) Built() time.Time { return s.built }

// LoadBalancers lists the enabled load balancers.
func (s *Snapshot) LoadBalancers() []*LB { return s.lbs }

// LoadBalancer finds an enabled load balancer by canonical name (lower
// case, no trailing dot).
func (s *Snapshot) LoadBalancer(name string) *LB {
	if i, ok := s.lbIndex[name]; ok {
		return s.lbs[i]
	}
	return nil
}

// LoadBalancerByID finds a load balancer by id (enabled or not: nil when
// disabled, since disabled ones are not compiled).
func (s *Snapshot) LoadBalancerByID(id string) *LB {
	for _, l := range s.lbs {
		if l.id == id {
			return l
		}
	}
	return nil
}

// Origin returns origin i of the global origin table (Answer.Origins holds
// such indices); nil for an index that names no origin.
func (s *Snapshot) Origin(i int32) *Origin {
	p, j := i/originStride, i%originStride
	if i < 0 || int(p) >= len(s.pools) || int(j) >= len(s.pools[p].origins) {
		return nil
	}
	return &s.pools[p].origins[j]
}

// PoolOrigins returns the global index of the first origin of pool i and
// how many origins it has.
func (s *Snapshot) PoolOrigins(i int32) (first int32, n int) {
	return s.pools[i].first, len(s.pools[i].origins)
}

// NumPools is the number of pool slots (PoolID is "" for an empty one).
func (s *Snapshot) NumPools() int { return len(s.pools) }

// PoolID returns the id of pool index i.
func (s *Snapshot) PoolID(i int32) string { return s.pools[i].id }

// PoolName returns the name of pool index i.
func (s *Snapshot) PoolName(i int32) string { return s.pools[i].name }

// Compile builds a snapshot from a whole configuration and a health view
// (nil: every origin healthy). It fails on an inconsistent configuration
// (a reference to something missing); the caller keeps its last good one.
func Compile(cfg *pools.Config, h *pools.Health) (*Snapshot, error) {
	return CompileFor(cfg, h, Options{})
}

// Options are the answering node's settings a snapshot depends on.
type Options struct {
	// Region is the node's own region (--region): dynamic_latency ranks
	// pools by the RTT from it for a client of unknown location.
	Region string
	// Now is the clock that says which shifts are in force; nil is
	// time.Now.
	Now func() time.Time
	// Measured is the RUM table measured_latency ranks by (nil: none).
	Measured *Measurements
}

// CompileFor is Compile for a node with opts.
func CompileFor(cfg *pools.Config, h *pools.Health, opts Options) (*Snapshot, error) {
	if cfg == nil {
		cfg = &pools.Config{}
	}
	if h == nil {
		h = &pools.Health{}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Snapshot{
		revision: cfg.Revision,
		cfg:      cfg,
		health:   h,
		built:    opts.Now(),
		now:      opts.Now,
		lbIndex:  make(map[string]int32, len(cfg.LoadBalancers)),
		poolByID: make(map[string]int32, len(cfg.Pools)),
		region:   regionIndex(opts.Region),
		gen:      generation.Add(1),
	}
	monitors := monitorSet(cfg)
	s.pools = make([]*pool, 0, len(cfg.Pools))
	staged, orders := rolloutsInForce(cfg, s.built)
	s.orders = orders
	for i := range cfg.Pools {
		idx := int32(len(s.pools))
		p, st := stage(&cfg.Pools[i], staged, s.built)
		cp, err := compilePool(p, idx, monitors, h)
		if err != nil {
			return nil, err
		}
		cp.staged = st
		s.poolByID[cp.id] = idx
		s.pools = append(s.pools, cp)
	}
	s.measured = s.compileMeasured(opts.Measured)
	zones := zoneNames(cfg)
	lbs := make([]*LB, 0, len(cfg.LoadBalancers))
	for i := range cfg.LoadBalancers {
		l := &cfg.LoadBalancers[i]
		if !l.Enabled {
			continue
		}
		lb, err := s.compileLB(l, zones)
		if err != nil {
			return nil, fmt.Errorf("load balancer %s (%s): %w", l.ID, l.Name, err)
		}
		lbs = append(lbs, lb)
	}
	s.applyShifts(lbs)
	for _, lb := range lbs {
		if err := s.addLB(lb); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// addLB makes a compiled load balancer answerable by name; Compile and
// Update both end here, so a name is refused twice the same way.
func (s *Snapshot) addLB(lb *LB) error {
	if _, dup := s.lbIndex[lb.name]; dup {
		return fmt.Errorf("load balancer %s: name %s used twice", lb.id, lb.name)
	}
	s.lbIndex[lb.name] = int32(len(s.lbs))
	s.lbs = append(s.lbs, lb)
	return nil
}

func monitorSet(cfg *pools.Config) map[string]bool {
	monitors := make(map[string]bool, len(cfg.Monitors))
	for _, m := range cfg.Monitors {
		monitors[m.ID] = true
	}
	return monitors
}

// monitorsExist reports whether every monitor of p's group exists, and
// the first that does not.
func monitorsExist(p *pools.Pool, monitors map[string]bool) (string, bool) {
	if p.Monitor != "" && !monitors[p.Monitor] {
		return p.Monitor, false
	}
	for _, m := range p.Monitors {
		if !monitors[m.Monitor] {
			return m.Monitor, false
		}
	}
	return "", true
}

func zoneNames(cfg *pools.Config) map[string]string {
	zones := make(map[string]string, len(cfg.Zones))
	for _, z := range cfg.Zones {
		zones[z.ID] = pools.CanonicalName(z.Name)
	}
	return zones
}

// compilePool compiles p as pool index idx.
func compilePool(p *pools.Pool, idx int32, monitors map[string]bool, h *pools.Health) (*pool, error) {
	if len(p.Origins) > pools.MaxOriginsPerPool {
		return nil, fmt.Errorf("pool %s: %d origins, more than %d", p.ID, len(p.Origins), pools.MaxOriginsPerPool)
	}
	if id, ok := monitorsExist(p, monitors); !ok {
		return nil, fmt.Errorf("pool %s: monitor %s does not exist", p.ID, id)
	}
	cp := &pool{
		id:         p.ID,
		name:       p.Name,
		rev:        p.Revision,
		modified:   p.ModifiedOn,
		enabled:    p.Enabled,
		first:      idx * originStride,
		n:          int32(len(p.Origins)),
		origins:    make([]Origin, 0, len(p.Origins)),
		minimum:    max(p.MinimumOrigins, 1),
		hashPolicy: p.OriginSteering.Policy == pools.OriginHash,
		shedShare:  p.LoadShedding.DefaultPercent / 100,
		shedHash:   p.LoadShedding.DefaultPolicy == pools.ShedHash,
	}
	idh := fnv.New64a()
	idh.Write([]byte(p.ID))
	cp.idHash = idh.Sum64()
	if p.Latitude != nil && p.Longitude != nil {
		cp.hasCoords = true
		cp.xyz = unitVector(*p.Latitude, *p.Longitude)
	}
	ph := h.Pool(p.ID)
	for j, o := range p.Origins {
		co := Origin{Pool: idx, Name: o.Name, Weight: o.Weight, ConfiguredWeight: o.Weight, Zone: o.Zone, Enabled: o.Enabled, Healthy: true}
		if ip, isIP := pools.ParseAddress(o.Address); isIP {
			co.Addr = ip
		} else {
			co.Host = pools.CanonicalName(o.Address) + "."
		}
		if p.Checked() && ph != nil {
			if oh, ok := ph.Origins[o.Name]; ok {
				co.Healthy, co.Reason, co.Note = oh.Healthy, oh.Reason, oh.Note
			}
			co.Load, co.Loaded = ph.Load[o.Name]
		}
		hf := fnv.New64a()
		hf.Write([]byte(p.ID))
		hf.Write([]byte{0})
		hf.Write([]byte(o.Name))
		co.hash = hf.Sum64()
		bit := uint64(1) << j
		if o.Enabled && o.Weight > 0 {
			cp.configured |= bit
			switch {
			case co.IsHost():
				cp.hosts |= bit
			case co.Addr.Is4():
				cp.v4 |= bit
			default:
				cp.v6 |= bit
			}
			if co.Healthy {
				cp.healthy |= bit
				cp.healthyCount++
			}
			if o.Zone != "" {
				found := false
				for k := range cp.zones {
					if cp.zones[k].zone == o.Zone {
						cp.zones[k].mask |= bit
						found = true
					}
				}
				if !found {
					cp.zones = append(cp.zones, zoneMask{zone: o.Zone, mask: bit})
				}
			}
		}
		cp.origins = append(cp.origins, co)
	}
	// A pool with no eligible origin (all disabled or weight 0) is
	// unhealthy whatever minimum_origins says (French seed: B and C at 0).
	cp.ok = cp.enabled && cp.healthyCount >= cp.minimum && cp.healthyCount > 0
	if b := p.LoadShedding.ByLoad; b != nil {
		cp.shedByLoad(b)
	}
	if ph != nil && len(ph.RTT) > 0 {
		for r, name := range pools.Regions {
			if rtt := ph.RTT[name]; rtt > 0 {
				cp.rtt[r] = rtt
			}
		}
	}
	return cp, nil
}

func (s *Snapshot) poolList(ids []string) ([]int32, error) {
	out := make([]int32, len(ids))
	for i, id := range ids {
		p, ok := s.poolByID[id]
		if !ok {
			return nil, fmt.Errorf("pool %s does not exist", id)
		}
		out[i] = p
	}
	return out, nil
}

func (s *Snapshot) compileLB(l *pools.LoadBalancer, zones map[string]string) (*LB, error) {
	zoneName, ok := zones[l.Zone]
	if !ok {
		return nil, fmt.Errorf("zone %s does not exist", l.Zone)
	}
	name := pools.CanonicalName(l.Name)
	if !pools.InZone(name, zoneName) {
		return nil, fmt.Errorf("name %s is outside zone %s", name, zoneName)
	}
	lb := &LB{
		id: l.ID, name: name, zoneID: l.Zone, ttl: l.TTL, rev: l.Revision, modified: l.ModifiedOn,
		policy:    l.Policy(),
		preferECS: l.LocationStrategy.PreferECS,
		spillover: l.ZonalAffinity.Spillover,
		ratio:     l.ZonalAffinity.SpilloverRatio,
		answers:   l.Answers,
		https:     l.HTTPS,
		rumMin:    int32(l.RUMMinSamples()),
	}
	if lb.ttl == 0 {
		lb.ttl = 30
	}
	switch l.AllDown.Action {
	case pools.AllDownNoData:
		lb.allDown = DownNoData
	case pools.AllDownRefused:
		lb.allDown = DownRefused
	case pools.AllDownAddresses:
		lb.allDown = DownAddresses
		for _, a := range l.AllDown.Addresses {
			ip, err := netip.ParseAddr(a)
			if err != nil {
				return nil, fmt.Errorf("all_down.addresses: %w", err)
			}
			if ip.Unmap().Is4() {
				lb.sorry4 = append(lb.sorry4, ip.Unmap())
			} else {
				lb.sorry6 = append(lb.sorry6, ip)
			}
		}
	}
	if lb.spillover == "" {
		lb.spillover = pools.AffinityDisabled
	}
	var err error
	if lb.defaults, err = s.poolList(l.DefaultPools); err != nil {
		return nil, err
	}
	if len(lb.defaults) > pools.MaxPoolsPerList {
		return nil, fmt.Errorf("more than %d default pools", pools.MaxPoolsPerList)
	}
	fb, ok := s.poolByID[l.FallbackPool]
	if !ok {
		return nil, fmt.Errorf("fallback pool %s does not exist", l.FallbackPool)
	}
	lb.fallback = fb
	for r, ids := range l.RegionPools {
		ri := regionIndex(r)
		if ri < 0 {
			return nil, fmt.Errorf("unknown region %s", r)
		}
		if lb.regionPools[ri], err = s.poolList(ids); err != nil {
			return nil, err
		}
	}
	if len(l.CountryPools) > 0 {
		lb.countryPools = make(map[string][]int32, len(l.CountryPools))
		for c, ids := range l.CountryPools {
			if lb.countryPools[strings.ToUpper(c)], err = s.poolList(ids); err != nil {
				return nil, err
			}
		}
	}
	lb.randomWeights = s.randomWeights(l, lb.defaults)
	s.stageOrder(lb, l)
	ranked := lb.defaults
	if lb.order != nil {
		ranked = append(slices.Clone(lb.defaults), lb.order.defaults...)
	}
	lb.dynRegion = s.dynamicRegions(ranked)
	lb.all = append(slices.Clone(ranked), lb.fallback)
	for _, list := range lb.regionPools {
		lb.all = append(lb.all, list...)
	}
	for _, list := range lb.countryPools {
		lb.all = append(lb.all, list...)
	}
	slices.Sort(lb.all)
	lb.all = slices.Compact(lb.all)
	for _, p := range lb.all {
		lb.sheds = lb.sheds || s.pools[p].shedShare > 0
	}
	lb.locationDependent = lb.policy == pools.SteeringGeo || lb.policy == pools.SteeringProximity ||
		lb.policy == pools.SteeringDynamicLatency || lb.policy == pools.SteeringMeasuredLatency ||
		lb.spillover != pools.AffinityDisabled
	return lb, nil
}

// randomWeights are the random_steering weights of list, in its order.
func (s *Snapshot) randomWeights(l *pools.LoadBalancer, list []int32) []float64 {
	out := make([]float64, len(list))
	for i, p := range list {
		w, ok := l.RandomSteering.PoolWeights[s.pools[p].id]
		if !ok {
			w = l.RandomSteering.DefaultWeight
		}
		out[i] = w
	}
	return out
}

// dynamicRegions maps each client region to the region whose RTT data
// ranks the pools: its own if any pool has data from it, else the nearest
// region (great-circle distance between region centres) that has.
func (s *Snapshot) dynamicRegions(list []int32) [numRegions]int8 {
	var has [numRegions]bool
	for _, p := range list {
		for r := range numRegions {
			if s.pools[p].rtt[r] > 0 {
				has[r] = true
			}
		}
	}
	var out [numRegions]int8
	for r := range numRegions {
		out[r] = -1
		best := math.Inf(1)
		for c := range numRegions {
			if !has[c] {
				continue
			}
			d := distance(regionCentres[r][0], regionCentres[r][1], regionCentres[c][0], regionCentres[c][1])
			if d < best {
				best, out[r] = d, int8(c)
			}
		}
	}
	return out
}
