package dnsserver

import (
	"github.com/glb-dns/glb/analytics"
)

// countNames names the answer counts of a snapshot: the load balancer,
// pool and origin at the indices a count's key holds (analytics.Namer).
//
// analytics.Counts keeps the names of every snapshot published until the
// counts of its epoch are drained, up to a bucket and its grace after the
// next one replaced it: at a write a second for 15 s, fifteen of them. So
// they are the names alone, never the snapshot (whose records are tens of
// megabytes at 100,000 origins: holding snapshots there kept every one
// published in the last 15 s alive), and they share with the names of the
// snapshot before them each load balancer and pool whose names did not
// change. A snapshot whose names are all unchanged (a weight, an address,
// a TTL) reuses its predecessor's, which Counts.Register keeps under the
// same epoch.
type countNames struct {
	lbs []*lbNames // by node.lbIdx
}

type lbNames struct {
	id    string
	pools []*poolNames // by slot: the order of steering.LB.Pools
}

type poolNames struct {
	id      string
	origins []string // by position in the pool
}

// CellNames names an answer count's load balancer (its id), pool (id)
// and origin (name) by their indices in the snapshot named.
func (c *countNames) CellNames(lb uint32, pool, origin uint8) (lbID, poolID, originName string, ok bool) {
	if int(lb) >= len(c.lbs) {
		return "", "", "", false
	}
	l := c.lbs[lb]
	if int(pool) >= len(l.pools) {
		return l.id, "", "", true // no pool answered
	}
	p := l.pools[pool]
	if origin == analytics.NoOrigin {
		return l.id, p.id, "", true
	}
	if int(origin) >= len(p.origins) {
		return "", "", "", false
	}
	return l.id, p.id, p.origins[origin], true
}

// nameCounts sets s.names and s.poolNames for s.steer and s.lbs, sharing
// what it can with prev (the snapshot s follows; nil: none). rebuilt,
// when not nil, says which pool indices steering compiled afresh since
// prev's (st.Rebuilt() after an incremental update): every other pool
// kept its index and its origins, so its names are prev's without a
// comparison. With rebuilt nil (a full compile) pools are matched by id
// and their origin names compared.
func (s *Snapshot) nameCounts(prev *Snapshot, rebuilt map[int32]bool) {
	st, lbs := s.steer, s.lbs
	s.poolNames = make([]*poolNames, st.NumPools())
	var prevPools []*poolNames
	var prevNames *countNames
	if prev != nil {
		prevPools, prevNames = prev.poolNames, prev.names
	}
	var prevByID map[string]*poolNames // made on the first pool not at its old index
	poolName := func(p int32) *poolNames {
		if n := s.poolNames[p]; n != nil {
			return n
		}
		id := st.PoolID(p)
		var old *poolNames
		if int(p) < len(prevPools) && prevPools[p] != nil && prevPools[p].id == id {
			old = prevPools[p]
			if rebuilt != nil && !rebuilt[p] {
				s.poolNames[p] = old
				return old
			}
		} else if prevPools != nil {
			if prevByID == nil {
				prevByID = make(map[string]*poolNames, len(prevPools))
				for _, n := range prevPools {
					if n != nil {
						prevByID[n.id] = n
					}
				}
			}
			old = prevByID[id]
		}
		first, count := st.PoolOrigins(p)
		same := old != nil && len(old.origins) == count
		for j := 0; same && j < count; j++ {
			same = old.origins[j] == st.Origin(first+int32(j)).Name
		}
		if same {
			s.poolNames[p] = old
			return old
		}
		n := &poolNames{id: id, origins: make([]string, count)}
		for j := range n.origins {
			n.origins[j] = st.Origin(first + int32(j)).Name
		}
		s.poolNames[p] = n
		return n
	}
	var prevLBs map[string]*lbNames // made on the first load balancer not at its old index
	// out stays nil while every load balancer so far has prev's names at
	// its index: names all unchanged are prev's, under the same epoch.
	var out []*lbNames
	if prevNames == nil || len(prevNames.lbs) != len(lbs) {
		out = make([]*lbNames, len(lbs))
	}
	for i, lb := range lbs {
		ps := lb.Pools()
		var old *lbNames
		if prevNames != nil {
			if i < len(prevNames.lbs) && prevNames.lbs[i].id == lb.ID() {
				old = prevNames.lbs[i]
			} else {
				if prevLBs == nil {
					prevLBs = make(map[string]*lbNames, len(prevNames.lbs))
					for _, n := range prevNames.lbs {
						prevLBs[n.id] = n
					}
				}
				old = prevLBs[lb.ID()]
			}
		}
		same := old != nil && len(old.pools) == len(ps)
		for k, p := range ps {
			if n := poolName(p); same && old.pools[k] != n {
				same = false
			}
		}
		n := old
		if !same {
			n = &lbNames{id: lb.ID(), pools: make([]*poolNames, len(ps))}
			for k, p := range ps {
				n.pools[k] = poolName(p)
			}
		}
		if out == nil {
			if prevNames.lbs[i] == n {
				continue
			}
			out = make([]*lbNames, len(lbs))
			copy(out, prevNames.lbs[:i])
		}
		out[i] = n
	}
	if out == nil {
		s.names = prevNames
		return
	}
	s.names = &countNames{lbs: out}
}
