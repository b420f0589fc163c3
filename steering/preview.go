package steering

import (
	"fmt"
	"math"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"github.com/glb-dns/glb/geodata"
	"github.com/glb-dns/glb/pools"
)

// Sample is one client of a traffic preview: a client subnet, as a
// resolver sends it in ECS, or a place (a region, or a country) standing
// for clients whose addresses nobody listed.
type Sample struct {
	Subnet  netip.Prefix
	Region  string
	Country string
	// Weight is how many queries the client stands for (0 counts as 1):
	// a subnet of the real-traffic sample counts as often as it asked.
	Weight float64
}

func (c Sample) weight() float64 {
	if c.Weight <= 0 {
		return 1
	}
	return c.Weight
}

// Place locates the clients of a region or a country the way a GeoIP
// database would: the country's region and continent, the region as the
// zone, and the region's centre as coordinates for proximity steering.
// It reports false for a region or country nobody knows, or a country
// outside the region given.
func Place(region, country string) (geodata.Location, bool) {
	loc := geodata.Location{Region: region, Country: country}
	if country != "" {
		r := geodata.RegionOf(country, "")
		if r == "" || region != "" && region != r {
			return geodata.Location{}, false
		}
		loc.Region, loc.Continent = r, geodata.ContinentOf(country)
	}
	i := regionIndex(loc.Region)
	if i < 0 {
		return geodata.Location{}, false
	}
	loc.Zone = loc.Region
	loc.Latitude = regionCentres[i][0] * 180 / math.Pi
	loc.Longitude = regionCentres[i][1] * 180 / math.Pi
	loc.HasCoordinates = true
	return loc, true
}

// Shares is what a sample of clients is answered: each pool's and each
// origin's share of the answers, ordered by share.
type Shares struct {
	Pools []PoolShare `json:"pools"`
	// NoRecords is the share of answers without a record: the chosen
	// pool has no origin of the address family asked for.
	NoRecords float64 `json:"no_records"`
	// AllDown is the share answered by the all_down policy (nodata,
	// refused or the sorry addresses) because no candidate served.
	AllDown float64 `json:"all_down"`
	// Orders are the orders in which the sample's clients get the
	// candidate pools (before health decides among them), each with the
	// share of the sample that gets it, largest first: what proximity,
	// dynamic latency and geo steering do with a place.
	Orders []CandidateOrder `json:"orders"`
}

// CandidateOrder is one order of the candidate pools and the share of the
// sample's decisions taken in it.
type CandidateOrder struct {
	Share float64     `json:"share"`
	Pools []OrderPool `json:"pools"`
}

// OrderPool is one candidate of an order. DistanceKm (proximity), RTTMs
// (dynamic latency) and MeasuredMs (measured_latency: the RUM median that
// ranked it) are given when every client of the order has the same one,
// as the clients of one place do.
type OrderPool struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Source     string   `json:"source"`
	DistanceKm *float64 `json:"distance_km,omitempty"`
	RTTMs      *float64 `json:"rtt_ms,omitempty"`
	MeasuredMs *float64 `json:"measured_ms,omitempty"`
}

// ByName maps each pool's name, and "pool/origin" for each origin, to
// its share: the shape to compare two previews by.
func (sh *Shares) ByName() map[string]float64 {
	out := map[string]float64{}
	for _, p := range sh.Pools {
		out[p.Name] = p.Share
		for _, o := range p.Origins {
			out[p.Name+"/"+o.Name] = o.Share
		}
	}
	return out
}

// PoolShare is the share of all answers that come from one pool.
type PoolShare struct {
	ID    string  `json:"id"`
	Name  string  `json:"name"`
	Share float64 `json:"share"`
	// Origins are the shares of all answers whose first record is the
	// origin (the address most clients connect to).
	Origins []OriginShare `json:"origins"`
}

// OriginShare is one origin's share of all answers.
type OriginShare struct {
	Name  string  `json:"name"`
	Share float64 `json:"share"`
}

// Preview decides for every client of sample on lb, by the decision the
// DNS path takes (Decide), and adds up the shares. Each client counts
// by its weight. What is random is counted by its odds, not drawn: the pool that
// random_steering puts first by its weight, and an origin drawn by random
// origin steering by its weight among the eligible origins. Hash origin
// steering picks one origin for a subnet; for a place, which stands for
// many subnets, the origins count by weight as for random. locate turns a
// subnet into a location (the GeoIP database and operator networks).
func (s *Snapshot) Preview(lb *LB, sample []Sample, qtype QType, locate Locator) Shares {
	type acc struct {
		name    string
		share   float64
		origins map[string]float64
		order   []string
	}
	byPool := map[string]*acc{}
	var poolOrder []string
	out := Shares{Pools: []PoolShare{}, Orders: []CandidateOrder{}}
	orders := map[string]int{} // order key → index in out.Orders
	draws := s.randomOdds(lb)
	var tr Trace
	var ans Answer
	total := 0.0
	for _, c := range sample {
		total += c.weight()
	}
	for _, c := range sample {
		req := lb.sampleRequest(c, qtype, locate)
		for _, d := range draws {
			// Load shedding drawn at random branches the decision: each way
			// it can go is followed with its odds.
			paths := [][]bool{nil}
			for len(paths) > 0 {
				br := &branchRand{u: d.u, path: paths[0], odds: 1}
				paths = paths[1:]
				s.Decide(lb, &req, br, &ans, &tr)
				for j := len(br.path); j < br.calls; j++ {
					paths = append(paths, append(slices.Clone(br.taken[:j]), true))
				}
				w := d.odds * br.odds * c.weight() / total
				out.addOrder(orders, tr.Candidates, w)
				if ans.Down != DownFallback {
					out.AllDown += w
					continue
				}
				a := byPool[tr.Pool.ID]
				if a == nil {
					a = &acc{name: tr.Pool.Name, origins: map[string]float64{}}
					byPool[tr.Pool.ID] = a
					poolOrder = append(poolOrder, tr.Pool.ID)
				}
				a.share += w
				add := func(name string, v float64) {
					if _, ok := a.origins[name]; !ok {
						a.order = append(a.order, name)
					}
					a.origins[name] += v
				}
				switch {
				case len(tr.Origins.Picked) == 0:
					out.NoRecords += w
				case tr.Origins.Policy == "hash" && req.Subnet.IsValid():
					add(tr.Origins.Picked[0], w)
				default:
					for _, e := range tr.Origins.Eligible {
						add(e.Name, w*e.Share)
					}
				}
			}
		}
	}
	for _, id := range poolOrder {
		a := byPool[id]
		ps := PoolShare{ID: id, Name: a.name, Share: a.share, Origins: []OriginShare{}}
		for _, n := range a.order {
			ps.Origins = append(ps.Origins, OriginShare{Name: n, Share: a.origins[n]})
		}
		sort.SliceStable(ps.Origins, func(i, j int) bool { return ps.Origins[i].Share > ps.Origins[j].Share })
		out.Pools = append(out.Pools, ps)
	}
	sort.SliceStable(out.Pools, func(i, j int) bool { return out.Pools[i].Share > out.Pools[j].Share })
	sort.SliceStable(out.Orders, func(i, j int) bool { return out.Orders[i].Share > out.Orders[j].Share })
	return out
}

// addOrder counts one decision's candidate order with weight w. Orders are
// the same when their pools and sources are; a distance or RTT that
// differs between two clients of one order is dropped, since no single
// figure then holds for the order.
func (sh *Shares) addOrder(seen map[string]int, cands []TraceCandidate, w float64) {
	var key strings.Builder
	for _, c := range cands {
		key.WriteString(c.ID)
		key.WriteByte(0)
		key.WriteString(c.Source)
		key.WriteByte(0)
	}
	i, ok := seen[key.String()]
	if !ok {
		o := CandidateOrder{Pools: make([]OrderPool, len(cands))}
		for j, c := range cands {
			o.Pools[j] = OrderPool{ID: c.ID, Name: c.Name, Source: c.Source, DistanceKm: c.DistanceKm, RTTMs: c.RTTMs, MeasuredMs: c.MeasuredMs}
		}
		i = len(sh.Orders)
		seen[key.String()] = i
		sh.Orders = append(sh.Orders, o)
	}
	o := &sh.Orders[i]
	o.Share += w
	for j, c := range cands {
		p := &o.Pools[j]
		if !sameFigure(p.DistanceKm, c.DistanceKm) {
			p.DistanceKm = nil
		}
		if !sameFigure(p.RTTMs, c.RTTMs) {
			p.RTTMs = nil
		}
		if !sameFigure(p.MeasuredMs, c.MeasuredMs) {
			p.MeasuredMs = nil
		}
	}
}

func sameFigure(a, b *float64) bool {
	return a != nil && b != nil && *a == *b
}

// sampleRequest is the query a sample client asks: a subnet as the ECS
// subnet of a query from its first address, a place as located by Place.
func (l *LB) sampleRequest(c Sample, qtype QType, locate Locator) Request {
	if c.Subnet.IsValid() {
		var req Request
		l.FillRequest(&req, c.Subnet.Addr(), c.Subnet, qtype, locate)
		return req
	}
	req := Request{SourcePrefix: -1, Type: qtype}
	req.Client, _ = Place(c.Region, c.Country)
	return req
}

// draw is one way the random part of a decision can go and its odds.
type draw struct {
	u, odds float64
}

// randomOdds lists the pools random_steering may put first with their
// odds, each as the value of the draw that picks it (the middle of its
// interval in randomPool's walk); a single sure draw for other policies.
func (s *Snapshot) randomOdds(lb *LB) []draw {
	sure := []draw{{u: 0.5, odds: 1}}
	if lb.policy != pools.SteeringRandom {
		return sure
	}
	total := 0.0
	for i, p := range lb.defaults {
		if s.pools[p].ok && lb.randomWeights[i] > 0 {
			total += lb.randomWeights[i]
		}
	}
	if total <= 0 {
		return sure
	}
	var out []draw
	cum := 0.0
	for i, p := range lb.defaults {
		w := lb.randomWeights[i]
		if !s.pools[p].ok || w <= 0 {
			continue
		}
		out = append(out, draw{u: (cum + w/2) / total, odds: w / total})
		cum += w
	}
	return out
}

// branchRand draws u for everything but load shedding, which follows path
// (not shedding beyond it) and multiplies odds by the odds of the way
// taken.
type branchRand struct {
	u     float64
	path  []bool
	taken []bool
	calls int
	odds  float64
}

func (b *branchRand) Float64() float64 { return b.u }

func (b *branchRand) branch(p float64) bool {
	shed := b.calls < len(b.path) && b.path[b.calls]
	b.calls++
	b.taken = append(b.taken, shed)
	if shed {
		b.odds *= p
	} else {
		b.odds *= 1 - p
	}
	return shed
}

// fixedRand draws u every time: the preview fixes the pool draw and reads
// origin odds from the trace, so later draws do not matter.
type fixedRand float64

func (f fixedRand) Float64() float64 { return float64(f) }

// With returns a snapshot of the same health in which objs replace the
// stored objects of the same kind and id (or are added): what an edit
// not yet saved would answer. s is not changed.
func (s *Snapshot) With(objs ...pools.Object) (*Snapshot, error) {
	cs := &pools.ChangeSet{Since: s.cfg.Revision, Revision: s.cfg.Revision}
	for _, o := range objs {
		c, err := pools.Clone(o)
		if err != nil {
			return nil, err
		}
		// No store gives a negative revision, so Update cannot take the
		// edited object for the compiled one and compiles it afresh.
		c.ObjectMeta().Revision = -1
		cs.Changes = append(cs.Changes, pools.ObjectChange{Kind: c.Kind(), ID: c.ObjectMeta().ID, Object: c})
	}
	cfg, err := s.cfg.Apply(cs)
	if err != nil {
		return nil, fmt.Errorf("apply edits: %w", err)
	}
	return Update(s, cfg, s.health, nil)
}
