package dnsserver

import (
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/glb-dns/glb/internal/follow"
	"github.com/glb-dns/glb/internal/promset"
	"github.com/glb-dns/glb/steering"
)

// Query types and rcodes are counted over fixed sets, so that no query
// can add a label value; every child is bound once, up front.
var (
	metricTypes  = [...]string{"A", "AAAA", "CNAME", "SOA", "NS", "TXT", "MX", "CAA", "ANY", "other"}
	metricRcodes = [...]string{"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED", "BADVERS"}
)

func typeIndex(t uint16) int {
	switch t {
	case typeA:
		return 0
	case typeAAAA:
		return 1
	case typeCNAME:
		return 2
	case typeSOA:
		return 3
	case typeNS:
		return 4
	case typeTXT:
		return 5
	case typeMX:
		return 6
	case typeCAA:
		return 7
	case typeANY:
		return 8
	}
	return 9
}

func rcodeIndex(rc int) int {
	if rc == rcodeBadVers {
		return 6
	}
	if rc >= 0 && rc <= rcodeRefused {
		return rc
	}
	return 2
}

type metrics struct {
	queries   [len(metricTypes)][len(metricRcodes)]prometheus.Counter
	duration  prometheus.Histogram
	truncated prometheus.Counter
	dropped   prometheus.Counter
	panics    prometheus.Counter

	answers   *prometheus.CounterVec
	fallback  *prometheus.CounterVec
	failOpen  *prometheus.CounterVec
	allDown   *prometheus.CounterVec
	tcpConns  prometheus.Gauge
	snapshots prometheus.Counter
	// udpBatched counts the UDP sockets the batched loop serves (the rest
	// take one datagram per call); readerReplies the replies the batched
	// loop sent through its reading socket, not a send-only twin.
	udpBatched    prometheus.Gauge
	readerReplies prometheus.Counter
	// RFC 2136 UPDATEs (rfc2136_commit.go): each update's outcome, the
	// store writes their batches made, the batches applied again after
	// another writer got in first, and the retransmissions answered with
	// the first message's answer.
	updates           *prometheus.CounterVec
	updateWrites      prometheus.Counter
	updateRetries     prometheus.Counter
	updateRetransmits prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	set := promset.New("dns")
	queries := set.CounterVec("queries_total", "DNS queries answered, by query type and response code.", "type", "rcode")
	m := &metrics{
		duration: set.Histogram("request_duration_seconds",
			"Time from a read query to its packed reply (a batch of queries is read at once), for one query in 16 of each reader.",
			[]float64{1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 1e-3, 1e-2}),
		truncated: set.Counter("truncated_total", "UDP replies truncated (TC set) because they did not fit the payload size."),
		dropped:   set.Counter("dropped_total", "Messages dropped without a reply: responses (QR set) and messages shorter than a header."),
		panics:    set.Counter("panics_total", "Panics recovered in the query handler (answered SERVFAIL)."),
		answers: set.CounterVec("lb_answers_total",
			"Load balancer answers with records, by load balancer and answering pool.", "load_balancer", "pool"),
		fallback: set.CounterVec("lb_fallback_answers_total",
			"Load balancer answers from the fallback pool because no candidate pool was healthy.", "load_balancer"),
		failOpen: set.CounterVec("lb_fail_open_answers_total",
			"Load balancer answers from a pool with no healthy origin (every enabled origin eligible).", "load_balancer"),
		allDown: set.CounterVec("lb_all_down_answers_total",
			"Load balancer answers by the all_down policy (nodata, refused, addresses) because no candidate pool served.", "load_balancer"),
		tcpConns: set.Gauge("tcp_connections", "Open DNS TCP connections."),
		udpBatched: set.Gauge("udp_batched_sockets",
			"UDP sockets answered in batches (recvmmsg/sendmmsg); the others take one datagram per system call."),
		readerReplies: set.Counter("udp_reader_replies_total",
			"Replies the batched UDP loop sent through the socket that read the query rather than its send-only twin (--udp-path reader, or no twin)."),
		snapshots: set.Counter("snapshots_published_total", "Snapshots published to the DNS server."),
		updates: set.CounterVec("updates_total",
			"Signed RFC 2136 UPDATEs by outcome: applied, unchanged (nothing to change), refused (prerequisite, grant or validation), failed (store), timeout (waited too long).", "outcome"),
		updateWrites: set.Counter("update_writes_total",
			"Store writes made by RFC 2136 UPDATEs; the updates of one zone that arrive together share one."),
		updateRetries: set.Counter("update_retries_total",
			"Batches of RFC 2136 UPDATEs applied again because another writer changed the zone first."),
		updateRetransmits: set.Counter("update_retransmits_total",
			"Retransmitted signed UPDATEs answered with the answer of the first copy, not applied again."),
	}
	for _, o := range []string{"applied", "unchanged", "refused", "failed", "timeout"} {
		m.updates.WithLabelValues(o)
	}
	for i, t := range metricTypes {
		for j, rc := range metricRcodes {
			m.queries[i][j] = queries.WithLabelValues(t, rc)
		}
	}
	if err := set.Register(reg); err != nil {
		return nil, err
	}
	return m, nil
}

// query counts one query; start is when it was read if it is one of
// those timed (worker.sampled), else zero.
func (m *metrics) query(qtype uint16, rcode int, truncated bool, start time.Time) {
	m.queries[typeIndex(qtype)][rcodeIndex(rcode)].Inc()
	if truncated {
		m.truncated.Inc()
	}
	if !start.IsZero() {
		m.duration.Observe(time.Since(start).Seconds())
	}
}

// lbMetrics are one load balancer's children, bound when its snapshot is
// published.
type lbMetrics struct {
	pools    []poolCounter
	other    prometheus.Counter // a pool not bound up front (cannot happen; kept safe)
	fallback prometheus.Counter
	failOpen prometheus.Counter
	allDown  prometheus.Counter
}

type poolCounter struct {
	pool int32
	c    prometheus.Counter
}

func (l *lbMetrics) count(ans *steering.Answer) {
	if ans.Down != steering.DownFallback {
		l.allDown.Inc()
		return
	}
	c := l.other
	if i := l.slot(ans.Pool); i < len(l.pools) {
		c = l.pools[i].c
	}
	c.Inc()
	if ans.Fallback {
		l.fallback.Inc()
	}
	if ans.FailOpen {
		l.failOpen.Inc()
	}
}

// slot is pool's position in the load balancer's pools (its Pools()
// order), len(l.pools) when it is not one of them.
func (l *lbMetrics) slot(pool int32) int {
	for i := range l.pools {
		if l.pools[i].pool == pool {
			return i
		}
	}
	return len(l.pools)
}

// labelsBound are the per-load-balancer metric children bind created.
type labelsBound struct {
	pools map[[2]string]bool // load balancer, pool
	lbs   map[string]bool
}

// bind gives every load balancer of snap its metric children. One that
// counts into the same children as before (the same one, or one
// recompiled under the same name with the same pools) keeps them: binding
// every load balancer again would make each small change cost the whole
// estate. kept[i] says prev's load balancer i was kept.
func (m *metrics) bind(prev *live, snap *Snapshot) (lv *live, kept []bool, bound labelsBound) {
	lv = &live{snap: snap, lbm: make([]*lbMetrics, len(snap.lbs))}
	st := snap.steer
	bound = labelsBound{pools: map[[2]string]bool{}, lbs: map[string]bool{}}
	var previous *follow.Finder[*steering.LB, string]
	if prev != nil {
		kept = make([]bool, len(prev.snap.lbs))
		previous = follow.New(prev.snap.lbs, (*steering.LB).Name)
	}
	for idx, lb := range snap.lbs {
		if prev != nil {
			if i := previous.Find(idx, lb.Name()); i >= 0 && !kept[i] && sameChildren(prev.snap.lbs[i], prev.snap.steer, lb, st) {
				kept[i] = true
				lv.lbm[idx] = prev.lbm[i]
				continue
			}
		}
		name := lb.Name()
		lm := &lbMetrics{}
		for _, p := range lb.Pools() {
			labels := [2]string{name, st.PoolName(p)}
			bound.pools[labels] = true
			lm.pools = append(lm.pools, poolCounter{pool: p, c: m.answers.WithLabelValues(labels[0], labels[1])})
		}
		// other counts a pool not bound up front (none should be), so
		// that counting never meets a nil.
		lm.other = m.answers.WithLabelValues(name, "other")
		bound.pools[[2]string{name, "other"}] = true
		lm.fallback = m.fallback.WithLabelValues(name)
		lm.failOpen = m.failOpen.WithLabelValues(name)
		lm.allDown = m.allDown.WithLabelValues(name)
		bound.lbs[name] = true
		lv.lbm[idx] = lm
	}
	return lv, kept, bound
}

// unbind deletes the children of prev's load balancers and pools that
// bind neither kept nor bound again, so that the label sets follow the
// configuration rather than grow.
func (m *metrics) unbind(prev *live, kept []bool, bound labelsBound) {
	if prev == nil {
		return
	}
	for i, lb := range prev.snap.lbs {
		if kept[i] {
			continue
		}
		name := lb.Name()
		for _, pc := range prev.lbm[i].pools {
			if k := [2]string{name, prev.snap.steer.PoolName(pc.pool)}; !bound.pools[k] {
				m.answers.DeleteLabelValues(k[0], k[1])
			}
		}
		if !bound.lbs[name] {
			m.answers.DeleteLabelValues(name, "other")
			m.fallback.DeleteLabelValues(name)
			m.failOpen.DeleteLabelValues(name)
			m.allDown.DeleteLabelValues(name)
		}
	}
}

// sameChildren reports whether load balancer b of snapshot bs counts into
// the same children as a of as: the same name, the same pool indices under
// the same pool names.
// The reuse rules of every step are in docs/architecture.md, "What an
// update shares".
func sameChildren(a *steering.LB, as *steering.Snapshot, b *steering.LB, bs *steering.Snapshot) bool {
	if a == b {
		return true // kept by steering.Update: none of its pools changed
	}
	if a.Name() != b.Name() || !slices.Equal(a.Pools(), b.Pools()) {
		return false
	}
	for _, p := range a.Pools() {
		if as.PoolName(p) != bs.PoolName(p) {
			return false
		}
	}
	return true
}
