package dnsserver

import (
	"fmt"
	"maps"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

// poolRecords are the records of one pool's origins.
type poolRecords struct {
	// tails[j] is origin j as an A, AAAA or CNAME record tail (type,
	// class, TTL, rdlength, rdata); the TTL is the load balancer's,
	// written over it per answer.
	tails [][]byte
	// hosts[j] is the CNAME target of a hostname origin (wire, lower case).
	hosts [][]byte
}

// originTail is the record tail of origin i of the steering snapshot
// (Answer.Origins holds such indices).
func (s *Snapshot) originTail(i int32) []byte {
	return s.records[i/pools.MaxOriginsPerPool].tails[i%pools.MaxOriginsPerPool]
}

// hostTail is the CNAME target of hostname origin i.
func (s *Snapshot) hostTail(i int32) []byte {
	return s.records[i/pools.MaxOriginsPerPool].hosts[i%pools.MaxOriginsPerPool]
}

// compileOrigins builds the record tails of the origins of pool p of the
// steering snapshot.
func (s *Snapshot) compileOrigins(p int32) error {
	first, n := s.steer.PoolOrigins(p)
	if first != p*pools.MaxOriginsPerPool {
		return fmt.Errorf("pool %d: origins at %d, not at pool × %d", p, first, pools.MaxOriginsPerPool)
	}
	tails := make([][]byte, pools.MaxOriginsPerPool)
	hosts := make([][]byte, pools.MaxOriginsPerPool)
	// An address or a name: 1 + 10 + 255 bytes at most, so a small buffer
	// (tail's 64 KiB per origin dominated large compiles), one per pool;
	// the tails share one slab.
	buf := make([]byte, 512)
	var slab []byte
	for j := range int32(n) {
		o := s.steer.Origin(first + j)
		hdr := dns.RR_Header{Name: ".", Class: dns.ClassINET}
		var rr dns.RR
		switch {
		case o.IsHost():
			w, err := wireName(o.Host)
			if err != nil {
				return fmt.Errorf("origin %s: %w", o.Name, err)
			}
			hosts[j] = w
			hdr.Rrtype = dns.TypeCNAME
			rr = &dns.CNAME{Hdr: hdr, Target: o.Host}
		case o.Addr.Is4():
			hdr.Rrtype = dns.TypeA
			rr = &dns.A{Hdr: hdr, A: o.Addr.AsSlice()}
		default:
			hdr.Rrtype = dns.TypeAAAA
			rr = &dns.AAAA{Hdr: hdr, AAAA: o.Addr.AsSlice()}
		}
		m, err := dns.PackRR(rr, buf, 0, nil, false)
		if err != nil {
			return fmt.Errorf("origin %s: %w", o.Name, err)
		}
		tail := buf[1:m]
		if cap(slab)-len(slab) < len(tail) {
			slab = make([]byte, 0, max(len(tail), 16*(int(n)-int(j))))
		}
		start := len(slab)
		slab = append(slab, tail...)
		tails[j] = slab[start:len(slab):len(slab)]
	}
	s.records[p] = &poolRecords{tails: tails, hosts: hosts}
	return nil
}

// Update builds the DNS snapshot of st from prev, the one built for the
// steering snapshot st was updated from (steering.Update): only the
// origins of rebuilt pools, the zones whose configuration changed and the
// names whose load balancer was recompiled are built again; the rest is
// shared. Anything else (no prev, another lineage, load balancers added,
// removed or reordered, zones added or removed) compiles in full.
func Update(prev *Snapshot, st *steering.Snapshot, loc steering.Locator) (*Snapshot, error) {
	if prev == nil || st.Parent() == 0 || prev.steer.Generation() != st.Parent() {
		return compile(st, loc, prev)
	}
	lbs := st.LoadBalancers()
	if len(lbs) != len(prev.lbs) {
		return compile(st, loc, prev)
	}
	for i, lb := range lbs {
		if lb.ID() != prev.lbs[i].ID() || lb.Name() != prev.lbs[i].Name() || lb.ZoneID() != prev.lbs[i].ZoneID() {
			return compile(st, loc, prev)
		}
	}
	type zoneState struct {
		rev    int64
		serial uint32
		name   string
	}
	prevZones := map[string]zoneState{}
	for _, z := range prev.steer.Config().Zones {
		prevZones[z.ID] = zoneState{z.Revision, z.Serial, z.Name}
	}
	cfg := st.Config()
	if len(cfg.Zones) != len(prevZones) {
		return compile(st, loc, prev)
	}

	s := &Snapshot{steer: st, loc: loc, zones: maps.Clone(prev.zones), lbs: lbs}
	s.records = make([]*poolRecords, st.NumPools())
	copy(s.records, prev.records)
	for _, p := range st.Rebuilt() {
		if err := s.compileOrigins(p); err != nil {
			return nil, err
		}
	}

	byID := map[string]*zone{}
	rebuilt := map[string]bool{}
	for i := range cfg.Zones {
		cz := &cfg.Zones[i]
		old, ok := prevZones[cz.ID]
		if !ok || old.name != cz.Name {
			return compile(st, loc, prev)
		}
		apex, err := wireName(pools.CanonicalName(cz.Name))
		if err != nil {
			return nil, err
		}
		if old.rev == cz.Revision && old.serial == cz.Serial && s.zones[string(apex)] != nil {
			byID[cz.ID] = s.zones[string(apex)]
			continue
		}
		z, err := compileSignedZone(cz, cfg.DNSSECKeys, prev.zones[string(apex)])
		if err != nil {
			return nil, fmt.Errorf("zone %s (%s): %w", cz.ID, cz.Name, err)
		}
		s.zones[string(z.apex)] = z
		byID[cz.ID] = z
		rebuilt[cz.ID] = true
	}
	// Names of rebuilt zones are added afresh; in a kept zone only the
	// nodes of recompiled load balancers change, copied on write.
	cloned := map[string]bool{}
	for i, lb := range lbs {
		z := byID[lb.ZoneID()]
		if z == nil {
			return nil, fmt.Errorf("load balancer %s: zone %s not served", lb.ID(), lb.ZoneID())
		}
		if !rebuilt[lb.ZoneID()] && prev.lbs[i] == lb {
			continue
		}
		w, err := wireName(lb.Name())
		if err != nil {
			return nil, fmt.Errorf("load balancer %s: %w", lb.ID(), err)
		}
		if rebuilt[lb.ZoneID()] {
			n := z.add(w)
			n.setLB(lb, i)
			continue
		}
		if !cloned[lb.ZoneID()] {
			nz := *z
			nz.nodes = maps.Clone(z.nodes)
			z = &nz
			s.zones[string(z.apex)], byID[lb.ZoneID()] = z, z
			cloned[lb.ZoneID()] = true
		}
		old := z.nodes[string(w)]
		if old == nil {
			return compile(st, loc, prev)
		}
		n := *old
		n.setLB(lb, i)
		z.nodes[string(w)] = &n
	}
	for id := range rebuilt {
		byID[id].nsecTypes()
	}
	rebuiltPools := make(map[int32]bool, len(st.Rebuilt()))
	for _, p := range st.Rebuilt() {
		rebuiltPools[p] = true
	}
	s.nameCounts(prev, rebuiltPools)
	return s, nil
}
