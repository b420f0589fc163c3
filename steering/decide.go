package steering

import (
	"encoding/binary"
	"math"
	"math/bits"
	"net/netip"

	"github.com/glb-dns/glb/geodata"
	"github.com/glb-dns/glb/pools"
)

// QType is the family a query asks for.
type QType uint8

const (
	QTypeA     QType = iota + 1 // IPv4 origins (and hostname origins as CNAME)
	QTypeAAAA                   // IPv6 origins (and hostname origins as CNAME)
	QTypeOther                  // any other type: only a hostname origin's CNAME answers
)

func (q QType) String() string {
	switch q {
	case QTypeA:
		return "A"
	case QTypeAAAA:
		return "AAAA"
	}
	return "other"
}

// Request is what the decision needs to know about one query.
type Request struct {
	// Client is the resolved location (unknown allowed: Prefix -1).
	Client geodata.Location
	// Subnet is the client subnet that hash origin steering hashes on: the
	// ECS prefix, or the resolver's address cut to /24 (IPv4) or /56.
	Subnet netip.Prefix
	// SourcePrefix is the ECS source prefix length, -1 without ECS.
	SourcePrefix int
	Type         QType
}

// Answer is the decision. The caller owns it and reuses it across queries.
type Answer struct {
	// Pool is the index of the chosen pool (Snapshot.PoolID), -1 if none.
	Pool int32
	// Origins[:N] index Snapshot.Origin, in answer order.
	Origins [pools.MaxOriginsPerPool]int32
	N       int
	// CNAME: Origins[0] is a hostname origin answered with a CNAME.
	CNAME bool
	TTL   uint32
	// Scope is the ECS scope prefix length to echo (§2 step 8).
	Scope int
	// LocationDependent: the answer depended on the client's location.
	LocationDependent bool
	// Fallback: the fallback pool answered because no candidate was healthy.
	Fallback bool
	// FailOpen: the chosen pool had no healthy eligible origin, so all its
	// enabled, weight > 0 origins were used.
	FailOpen bool
	// Down is the all_down policy that answered (DownFallback: none did;
	// the fallback pool answers as it always has).
	Down Down

	work scratch
}

// scratch is Decide's working memory. It lives in the caller's Answer,
// which the caller reuses, because arrays on Decide's stack are zeroed on
// every query: these three cost a sixth of a geo answer's instructions.
// Decide reads no element it has not written in the same call.
type scratch struct {
	cands  [2 * pools.MaxPoolsPerList]int32
	keys   [pools.MaxPoolsPerList]float64   // distance or RTT per candidate
	scores [pools.MaxOriginsPerPool]float64 // rendezvous score per origin
}

// Records returns the chosen origin indices.
func (a *Answer) Records() []int32 { return a.Origins[:a.N] }

// Rand is the source of randomness (math/rand/v2's *rand.Rand fits).
type Rand interface{ Float64() float64 }

// Decide runs steps 3 to 8 of SPEC §2 for one query on lb. It writes the
// result into ans and, when tr is not nil, every step into tr. With tr nil
// it allocates nothing.
func (s *Snapshot) Decide(lb *LB, req *Request, rnd Rand, ans *Answer, tr *Trace) {
	ans.Pool, ans.N, ans.CNAME, ans.Fallback, ans.FailOpen, ans.Down = -1, 0, false, false, false, DownFallback
	ans.TTL = lb.ttl
	if tr != nil {
		tr.begin(s, lb, req)
	}

	// Steps 3 and 4: candidate pools, the first serving one (enabled,
	// healthy, not shifted), else the fallback pool whatever its health.
	// Without shifts or shedding that is the first healthy one.
	cands := s.candidates(lb, req, rnd, &ans.work, tr)
	pi, chosen, hashShed := int32(-1), -1, false
	if lb.shift == nil && !lb.sheds {
		for i, c := range cands {
			if s.pools[c].ok {
				pi, chosen = c, i
				break
			}
		}
	} else {
		pi, chosen, hashShed = s.firstServing(lb, req, rnd, cands, tr)
	}
	if chosen >= 0 && tr != nil {
		tr.choose(chosen)
	}
	if pi < 0 {
		if lb.allDown != DownFallback {
			s.allDown(lb, req, ans, tr)
			return
		}
		pi = lb.fallback
		ans.Fallback = true
	}
	ans.Pool = pi
	p := s.pools[pi]

	// Step 5: the original eligible origins, failing open on a pool with
	// no healthy eligible origin rather than answering nothing. Shifted
	// origins are left out like down ones, and answered only when the
	// pool has nothing else.
	out := lb.shiftedOrigins(pi)
	a := p.healthy &^ out
	if a == 0 {
		a = p.configured &^ out
		if a == 0 {
			a = p.configured
		}
		ans.FailOpen = true
	}

	// Step 6: zonal affinity.
	m := s.affinity(lb, p, req.Client.Zone, a, out, tr)

	// Step 7: records of the query's family, ordered by origin steering.
	var fam uint64
	switch req.Type {
	case QTypeA:
		fam = p.v4 | p.hosts
	case QTypeAAAA:
		fam = p.v6 | p.hosts
	default:
		fam = p.hosts
	}
	// load_shedding.by_load: the overloaded origins answer only when
	// nothing else can (load.go).
	elig := m & fam
	if e := elig &^ p.overloaded; e != 0 {
		elig = e
	}
	s.pick(lb, p, req, elig, rnd, ans)

	// Step 8: the ECS scope.
	// A staged pool order is drawn by the client's subnet.
	// measured_latency ranks by the client's /24 or /48 network.
	hashed := p.hashPolicy || hashShed || lb.order != nil || lb.policy == pools.SteeringMeasuredLatency
	ans.LocationDependent = lb.locationDependent || hashed
	ans.Scope = 0
	if ans.LocationDependent && ans.N > 0 {
		ans.Scope = ecsScope(req, hashed)
	}
	if tr != nil {
		tr.finish(s, lb, p, elig, m&fam&p.overloaded&^elig, ans)
	}
}

// firstServing is step 4 under traffic controls: the first candidate
// that serves (enabled, healthy, not shifted); one that sheds this query
// passes it on to the next serving candidate, and with none left keeps it.
// chosen is the position in cands; hashShed says a hash-shedding pool
// took part, which makes the answer depend on the client's subnet.
func (s *Snapshot) firstServing(lb *LB, req *Request, rnd Rand, cands []int32, tr *Trace) (pi int32, chosen int, hashShed bool) {
	pi, chosen = -1, -1
	for i, c := range cands {
		if !s.serving(lb, c) {
			continue
		}
		pi, chosen = c, i
		p := s.pools[c]
		if p.shedShare <= 0 {
			break
		}
		hashShed = hashShed || p.shedHash
		shed := p.shed(req, rnd)
		if tr != nil {
			tr.shed(i, p, shed)
		}
		if !shed {
			break
		}
	}
	return pi, chosen, hashShed
}

// allDown answers by lb's all_down policy: no pool, no origin records.
// The answer depends on the client's location as much as the pool order
// does, so it gets the scope a positive answer would.
func (s *Snapshot) allDown(lb *LB, req *Request, ans *Answer, tr *Trace) {
	ans.Down = lb.allDown
	ans.LocationDependent = lb.locationDependent
	ans.Scope = 0
	if ans.LocationDependent {
		ans.Scope = ecsScope(req, false)
	}
	if tr != nil {
		tr.allDown(lb, req, ans)
	}
}

// ecsScope is the ECS scope of an answer that depends on the client: the
// prefix that located it, or (hashed) the subnet the hash read, never more
// than the query's source prefix; 0 for a query without ECS.
func ecsScope(req *Request, hashed bool) int {
	if req.SourcePrefix <= 0 {
		return 0
	}
	d := req.Client.Prefix
	if d < 0 {
		// Nothing located the client: any other address of its source
		// subnet might locate differently, so the answer holds for it alone.
		d = req.SourcePrefix
	}
	if hashed {
		d = max(d, req.Subnet.Bits())
	}
	return min(d, req.SourcePrefix)
}

// affinity applies the zonal affinity table of SPEC §4 to A. Shifted
// origins (out) count as down: in B and C, not in A; staying within the
// zone never answers them, so a zone shifted whole spills to A.
func (s *Snapshot) affinity(lb *LB, p *pool, zone string, a, out uint64, tr *Trace) uint64 {
	if lb.spillover == pools.AffinityDisabled || zone == "" {
		if tr != nil {
			tr.affinity(s, lb, p, zone, a, 0, a)
		}
		return a
	}
	var c uint64 // B (p.configured) ∩ client zone
	for _, z := range p.zones {
		if z.zone == zone {
			c = z.mask
			break
		}
	}
	m := a
	if c != 0 {
		i := a & c
		switch lb.spillover {
		case pools.AffinityStayWithinZone:
			m = c &^ out
			if i != 0 {
				m = i
			} else if m == 0 {
				m = a
			}
		case pools.AffinitySpillCrossZone:
			// |I| / |C| >= r, compared without division so that 4/5 >= 0.8
			// holds exactly; r = 0 keeps the client in zone while I is not empty.
			ni, nc := float64(bits.OnesCount64(i)), float64(bits.OnesCount64(c))
			if i != 0 && ni >= lb.ratio*nc-1e-9 {
				m = i
			}
		}
	}
	if tr != nil {
		tr.affinity(s, lb, p, zone, a, c, m)
	}
	return m
}

// pick orders the eligible origins of the family by the pool's origin
// steering and keeps the first lb.answers of them (0: all). A hostname
// origin drawn first answers alone, with a CNAME; later hostname origins
// are passed over since a CNAME cannot share its name with addresses.
func (s *Snapshot) pick(lb *LB, p *pool, req *Request, elig uint64, rnd Rand, ans *Answer) {
	limit := lb.answers
	if limit <= 0 {
		limit = pools.MaxOriginsPerPool
	}
	orig := p.origins
	scores := &ans.work.scores
	if p.hashPolicy && elig != 0 {
		h := subnetHash(req.Subnet)
		for m := elig; m != 0; m &= m - 1 {
			j := bits.TrailingZeros64(m)
			u := float64(mix64(h^orig[j].hash)>>11+1) / (1 << 53) // (0, 1]
			// Weighted rendezvous hashing: the lowest -ln(u)/w wins.
			scores[j] = -math.Log(u) / orig[j].Weight
		}
	}
	for ans.N < limit && elig != 0 {
		var j int
		if p.hashPolicy {
			j = lowestScore(elig, scores)
		} else {
			j = weightedDraw(elig, orig, rnd)
		}
		if orig[j].IsHost() {
			if ans.N == 0 {
				ans.Origins[0] = p.first + int32(j)
				ans.N, ans.CNAME = 1, true
				return
			}
			elig &^= p.hosts
			continue
		}
		ans.Origins[ans.N] = p.first + int32(j)
		ans.N++
		elig &^= 1 << j
		elig &^= p.hosts
	}
}

func weightedDraw(elig uint64, orig []Origin, rnd Rand) int {
	total := 0.0
	for m := elig; m != 0; m &= m - 1 {
		total += orig[bits.TrailingZeros64(m)].Weight
	}
	r := rnd.Float64() * total
	last := 0
	for m := elig; m != 0; m &= m - 1 {
		j := bits.TrailingZeros64(m)
		r -= orig[j].Weight
		if r < 0 {
			return j
		}
		last = j
	}
	return last // rounding left r at 0: the last one
}

func lowestScore(elig uint64, scores *[pools.MaxOriginsPerPool]float64) int {
	best, bestScore := -1, math.Inf(1)
	for m := elig; m != 0; m &= m - 1 {
		j := bits.TrailingZeros64(m)
		if best < 0 || scores[j] < bestScore {
			best, bestScore = j, scores[j]
		}
	}
	return best
}

// subnetHash hashes a client subnet: its address cut to its length, and
// the length, stable across snapshots and nodes. Two 64-bit halves mixed
// with splitmix64's finaliser: the answer path runs it for every query to
// a hash-steered or hash-shedding pool, where byte-wise FNV cost 200
// instructions.
func subnetHash(p netip.Prefix) uint64 {
	a := p.Addr()
	bits := p.Bits()
	if a.Is4() {
		bits += 96
	}
	b := a.As16()
	hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	switch {
	case bits <= 0:
		hi, lo = 0, 0
	case bits < 64:
		hi &^= ^uint64(0) >> bits
		lo = 0
	case bits < 128:
		lo &^= ^uint64(0) >> (bits - 64)
	}
	return mix64(mix64(hi^uint64(p.Bits()&0xff)) ^ lo)
}

// mix64 is splitmix64's finaliser: it spreads the combined hash so that
// nearby subnets give unrelated scores.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
