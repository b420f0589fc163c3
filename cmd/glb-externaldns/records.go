package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Owner labels: "external-dns:<owner>" on the pools, origins and records
// of one cluster, "external-dns" on the load balancers the provider made
// for all the clusters that share a name.
const (
	ownerPrefix = "external-dns:"
	lbOwner     = "external-dns"
)

func (p *provider) tag() string { return ownerPrefix + p.owner }

// poolIDFor is the id of the pool the provider makes for a name and set
// identifier: derived, so that a retried create finds the pool made by
// the try before instead of making a second one.
func poolIDFor(owner, name, setID string) string {
	return "edns-" + hashHex(owner+"\x00"+name+"\x00"+setID)
}

// lbIDFor is the id of the load balancer the provider makes for a name,
// the same in every cluster, so that two clusters creating it at once
// collide on the id and the second joins the first's.
func lbIDFor(name string) string { return "edns-" + hashHex(name) }

func hashHex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:12])
}

// An origin the provider makes is named "<set identifier>/<address>", so
// that a pool shared by several endpoints (webhook/glb-pool) still tells
// whose each origin is.
func originName(setID, addr string) string { return setID + "/" + addr }

func parseOriginName(name string) (setID, addr string, ok bool) {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return "", "", false
	}
	return name[:i], name[i+1:], true
}

// canonicalName is a name as glb stores it: lower case, no trailing dot.
func canonicalName(s string) string { return strings.ToLower(strings.TrimSuffix(s, ".")) }

// state is what one Records or ApplyChanges read of glb: the zone's load
// balancers by name and every pool by id. ApplyChanges' workers share it.
type state struct {
	lbs   shared[glbLB]
	pools shared[glbPool]
	// monitors are the ids of glb's monitors, so that a pool is never
	// asked for one glb does not have.
	monitors []string
}

func (s *state) lb(name string) *glbLB          { return s.lbs.get(name) }
func (s *state) setLB(name string, l *glbLB)    { s.lbs.set(name, l) }
func (s *state) pool(id string) *glbPool        { return s.pools.get(id) }
func (s *state) setPool(id string, pl *glbPool) { s.pools.set(id, pl) }

// shared is a map the workers read and write at once; a nil value is
// "none any more".
type shared[T any] struct {
	mu sync.Mutex
	m  map[string]*T
}

func (s *shared[T]) get(k string) *T {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[k]
}

func (s *shared[T]) set(k string, v *T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v == nil {
		delete(s.m, k)
	} else {
		s.m[k] = v
	}
}

// load reads the zone's load balancers and every pool.
func (p *provider) load(ctx context.Context) (*state, error) {
	lbs, err := p.loadLBs(ctx)
	if err != nil {
		return nil, err
	}
	ps, err := list[*glbPool](ctx, p.cl, "pools")
	if err != nil {
		return nil, err
	}
	ms, err := list[struct {
		ID string `json:"id"`
	}](ctx, p.cl, "monitors")
	if err != nil {
		return nil, err
	}
	st := &state{lbs: shared[glbLB]{m: lbs}, pools: shared[glbPool]{m: make(map[string]*glbPool, len(ps))}}
	for _, pl := range ps {
		st.pools.m[pl.ID] = pl
	}
	for _, m := range ms {
		st.monitors = append(st.monitors, m.ID)
	}
	slices.Sort(st.monitors)
	return st, nil
}

func (p *provider) loadLBs(ctx context.Context) (map[string]*glbLB, error) {
	all, err := list[*glbLB](ctx, p.cl, "load_balancers")
	if err != nil {
		return nil, err
	}
	lbs := map[string]*glbLB{}
	for _, l := range all {
		if l.Zone == p.zoneID {
			lbs[l.Name] = l
		}
	}
	return lbs, nil
}

// ours is one endpoint's origins in a pool: those the provider made for
// that set identifier.
type ours struct {
	v4, v6 []string
	weight float64
}

// oursIn returns the origins this owner made in pl for setID.
func (p *provider) oursIn(pl *glbPool, setID string) ours {
	o := ours{weight: 1}
	tag := p.tag()
	for _, raw := range pl.Origins {
		var og glbOrigin
		if json.Unmarshal(raw, &og) != nil || og.Owner != tag {
			continue
		}
		sid, addr, ok := parseOriginName(og.Name)
		if !ok || sid != setID {
			continue
		}
		a, err := netip.ParseAddr(addr)
		if err != nil {
			continue
		}
		if a.Is4() {
			o.v4 = append(o.v4, addr)
		} else {
			o.v6 = append(o.v6, addr)
		}
		o.weight = og.Weight
	}
	return o
}

// setIDsIn lists the set identifiers this owner has origins for in pl.
func (p *provider) setIDsIn(pl *glbPool) []string {
	var ids []string
	tag := p.tag()
	for _, raw := range pl.Origins {
		var og glbOrigin
		if json.Unmarshal(raw, &og) != nil || og.Owner != tag {
			continue
		}
		if sid, _, ok := parseOriginName(og.Name); ok && !slices.Contains(ids, sid) {
			ids = append(ids, sid)
		}
	}
	return ids
}

// Records is what this owner has in the zone, as endpoints: for each load
// balancer, one A and one AAAA endpoint per set identifier with origins of
// this owner in one of its default pools; and its static records. The
// provider-specific properties come back in the canonical form
// AdjustEndpoints gives the desired ones, so that an unchanged cluster
// plans no change.
func (p *provider) Records(ctx context.Context) ([]*endpoint, error) {
	z, err := p.cl.zone(ctx, p.zoneID)
	if err != nil {
		return nil, err
	}
	st, err := p.load(ctx)
	if err != nil {
		return nil, err
	}
	out := []*endpoint{}
	operators := map[string]bool{}
	for _, lb := range st.lbs.m {
		if lb.Owner != lbOwner {
			operators[lb.Name] = true
		}
	}
	p.mu.Lock()
	p.operatorLBs = operators
	p.mu.Unlock()
	for _, lb := range st.lbs.m {
		seen := map[string]bool{}
		for _, id := range lb.DefaultPools {
			pl := st.pools.m[id]
			if pl == nil || seen[id] {
				continue
			}
			seen[id] = true
			for _, sid := range p.setIDsIn(pl) {
				o := p.oursIn(pl, sid)
				props := p.propsOf(lb, pl, sid, o.weight)
				for _, fam := range []struct {
					typ   string
					addrs []string
				}{{"A", o.v4}, {"AAAA", o.v6}} {
					if len(fam.addrs) == 0 {
						continue
					}
					slices.Sort(fam.addrs)
					out = append(out, &endpoint{DNSName: lb.Name, RecordType: fam.typ, Targets: fam.addrs,
						SetIdentifier: sid, RecordTTL: int64(lb.TTL), ProviderSpecific: props})
				}
			}
		}
	}
	type rkey struct{ name, typ string }
	recs := map[rkey]*endpoint{}
	for _, raw := range z.Records {
		var r glbRecord
		if json.Unmarshal(raw, &r) != nil || r.Owner != p.tag() {
			continue
		}
		k := rkey{canonicalName(r.Name), strings.ToUpper(r.Type)}
		e := recs[k]
		if e == nil {
			e = &endpoint{DNSName: k.name, RecordType: k.typ, RecordTTL: int64(r.TTL)}
			recs[k] = e
			out = append(out, e)
		}
		e.Targets = append(e.Targets, r.Content)
	}
	for _, e := range recs {
		slices.Sort(e.Targets)
	}
	slices.SortFunc(out, func(a, b *endpoint) int {
		return strings.Compare(a.DNSName+"\x00"+a.SetIdentifier+"\x00"+a.RecordType, b.DNSName+"\x00"+b.SetIdentifier+"\x00"+b.RecordType)
	})
	return out, nil
}

// propsOf states an endpoint's pool, region, monitor and weight as
// properties, leaving out those at their defaults (as AdjustEndpoints
// does).
func (p *provider) propsOf(lb *glbLB, pl *glbPool, setID string, weight float64) []property {
	var props []property
	if pl.Owner == p.tag() && pl.Monitor != p.monitor {
		props = append(props, property{propMonitor, pl.Monitor})
	}
	if pl.ID != poolIDFor(p.owner, lb.Name, setID) {
		props = append(props, property{propPool, pl.ID})
	}
	if r := regionOf(lb, pl.ID); r != "" {
		props = append(props, property{propRegion, r})
	}
	if weight != 1 {
		props = append(props, property{propWeight, strconv.FormatFloat(weight, 'g', -1, 64)})
	}
	return props
}

// regionOf is the first region (in code order) whose pool list has id.
func regionOf(lb *glbLB, id string) string {
	var rs []string
	for r, ids := range lb.RegionPools {
		if slices.Contains(ids, id) {
			rs = append(rs, r)
		}
	}
	slices.Sort(rs)
	if len(rs) == 0 {
		return ""
	}
	return rs[0]
}
