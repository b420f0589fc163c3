package steering

import (
	"cmp"
	"slices"
)

// PoolMove is a share of all answers that an edit moves from one pool to
// another. An empty id is no pool: the all_down policy answered.
type PoolMove struct {
	From     string  `json:"from"`
	FromName string  `json:"from_name"`
	To       string  `json:"to"`
	ToName   string  `json:"to_name"`
	Share    float64 `json:"share"`
}

// Moves says which share of the sample's answers goes from which pool to
// which when lb of s becomes after of edited, client by client: a
// client's answers leave the pools it loses share in for those it gains
// share in, in proportion. Largest first; moves under 0.05 % are left out.
func Moves(s *Snapshot, lb *LB, edited *Snapshot, after *LB, sample []Sample, qtype QType, locate Locator) []PoolMove {
	total := 0.0
	for _, c := range sample {
		total += c.weight()
	}
	type edge struct{ from, to string }
	flows := map[edge]float64{}
	names := map[string]string{"": "all_down"}
	for _, c := range sample {
		d := map[string]float64{}
		for sign, sh := range map[float64]Shares{-1: s.Preview(lb, []Sample{c}, qtype, locate), 1: edited.Preview(after, []Sample{c}, qtype, locate)} {
			for _, p := range sh.Pools {
				d[p.ID] += sign * p.Share
				names[p.ID] = p.Name
			}
			d[""] += sign * sh.AllDown
		}
		moved := 0.0
		for _, v := range d {
			moved += max(v, 0)
		}
		if moved < 1e-9 {
			continue
		}
		for from, lost := range d {
			for to, won := range d {
				if lost < 0 && won > 0 {
					flows[edge{from, to}] += -lost * won / moved * c.weight() / total
				}
			}
		}
	}
	out := []PoolMove{}
	for e, share := range flows {
		if share >= 0.0005 {
			out = append(out, PoolMove{From: e.from, FromName: names[e.from], To: e.to, ToName: names[e.to], Share: share})
		}
	}
	slices.SortFunc(out, func(a, b PoolMove) int {
		return cmp.Or(cmp.Compare(b.Share, a.Share), cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To))
	})
	return out
}
