package zonefile

import (
	"slices"
	"strings"

	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

// firstDraw makes every random choice of a decision its first one, so
// that the answer for a client of unknown location is one answer, not a
// draw: a file or a transfer must not change from one reading to the next.
type firstDraw struct{}

func (firstDraw) Float64() float64 { return 0 }

// StaticLBs returns the load balancers of zone zoneID in snap, each with
// the records a client of unknown location gets now (SPEC §2 steps 1–8
// with no location; every random choice its first), sorted by name. This
// is what a file or a secondary carries: a fail-static answer.
func StaticLBs(snap *steering.Snapshot, zoneID string) []LB {
	if snap == nil {
		return nil
	}
	var out []LB
	var ans steering.Answer
	for _, lb := range snap.LoadBalancers() {
		if lb.ZoneID() != zoneID {
			continue
		}
		e := LB{ID: lb.ID(), Name: pools.CanonicalName(lb.Name())}
		for _, qt := range []steering.QType{steering.QTypeA, steering.QTypeAAAA} {
			req := steering.Request{SourcePrefix: -1, Type: qt}
			req.Client.Prefix = -1
			snap.Decide(lb, &req, firstDraw{}, &ans, nil)
			typ := "A"
			if qt == steering.QTypeAAAA {
				typ = "AAAA"
			}
			switch ans.Down {
			case steering.DownRefused, steering.DownNoData:
				continue
			case steering.DownAddresses:
				for _, a := range lb.Sorry(qt) {
					e.Records = append(e.Records, pools.Record{Name: e.Name, Type: typ, Content: a.String(), TTL: ans.TTL})
				}
				continue
			}
			if ans.CNAME {
				o := snap.Origin(ans.Origins[0])
				c := pools.Record{Name: e.Name, Type: "CNAME", Content: o.Host, TTL: ans.TTL}
				if !slices.Contains(e.Records, c) {
					e.Records = append(e.Records, c)
				}
				continue
			}
			for _, oi := range ans.Records() {
				o := snap.Origin(oi)
				e.Records = append(e.Records, pools.Record{Name: e.Name, Type: typ, Content: o.Addr.String(), TTL: ans.TTL})
			}
		}
		// A CNAME stands alone (RFC 1034 §3.6.2): a pool that answers one
		// family with a hostname answers both with it.
		if i := slices.IndexFunc(e.Records, func(r pools.Record) bool { return r.Type == "CNAME" }); i >= 0 {
			e.Records = []pools.Record{e.Records[i]}
		}
		slices.SortFunc(e.Records, func(a, b pools.Record) int {
			return strings.Compare(a.Type+" "+a.Content, b.Type+" "+b.Content)
		})
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b LB) int { return strings.Compare(a.Name, b.Name) })
	return out
}
