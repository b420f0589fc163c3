package zonefile

import (
	"slices"
	"strconv"
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
		var hints [2][]string // ipv4hint, ipv6hint: the addresses chosen, as DNS's HTTPS answer has them
		var httpsTTL uint32
		for _, qt := range []steering.QType{steering.QTypeA, steering.QTypeAAAA} {
			req := steering.Request{SourcePrefix: -1, Type: qt}
			req.Client.Prefix = -1
			snap.Decide(lb, &req, firstDraw{}, &ans, nil)
			typ, fam := "A", 0
			if qt == steering.QTypeAAAA {
				typ, fam = "AAAA", 1
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
			if qt == steering.QTypeA {
				httpsTTL = ans.TTL
			}
			for _, oi := range ans.Records() {
				o := snap.Origin(oi)
				e.Records = append(e.Records, pools.Record{Name: e.Name, Type: typ, Content: o.Addr.String(), TTL: ans.TTL})
				hints[fam] = append(hints[fam], o.Addr.String())
			}
		}
		if h := lb.HTTPS(); h != nil && (len(hints[0]) > 0 || len(hints[1]) > 0) {
			e.Records = append(e.Records, pools.Record{Name: e.Name, Type: "HTTPS", Content: httpsContent(h, hints), TTL: httpsTTL})
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

// httpsContent is a load balancer's HTTPS record as DNS answers a client
// of unknown location: priority 1, target the owner, its parameters in key
// order (RFC 9460 §2.2), the chosen addresses as hints.
func httpsContent(h *pools.HTTPSRecord, hints [2][]string) string {
	var b strings.Builder
	b.WriteString("1 .")
	if len(h.ALPN) > 0 {
		b.WriteString(" alpn=" + strings.Join(h.ALPN, ","))
	}
	if h.NoDefaultALPN {
		b.WriteString(" no-default-alpn")
	}
	if h.Port > 0 {
		b.WriteString(" port=" + strconv.Itoa(h.Port))
	}
	if len(hints[0]) > 0 {
		b.WriteString(" ipv4hint=" + strings.Join(hints[0], ","))
	}
	if h.ECH != "" {
		b.WriteString(" ech=" + h.ECH)
	}
	if len(hints[1]) > 0 {
		b.WriteString(" ipv6hint=" + strings.Join(hints[1], ","))
	}
	return b.String()
}
