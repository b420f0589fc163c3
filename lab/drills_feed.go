package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/glb-dns/glb/internal/webhooktest"
	"github.com/glb-dns/glb/pools"
)

// Drill 11: a node's change feed blocked. NEAS logs in as a role of its
// own (ownRole); the drill takes away its right to read the change log
// (config_changes), as a grant lost in a migration would. NEAS still
// reports every second, reads the store's revision and health, and
// answers from its snapshot, but can follow no write. A write through WEU
// then leaves it behind: GET /nodes must show its lag and call it stale
// within 10 s, and one node notification (not one per node) reach a real
// receiver, its signature checked. With the right given back, NEAS
// follows within the revision poll and serves again (a second
// notification).

const (
	titleFeed = "a node's change feed blocked: GET /nodes shows its lag and stale within 10 s, one node notification sent"
	// feedVictim is the node whose feed drill 11 blocks: NEAS.
	feedVictim = 2
	// ownRole is the PostgreSQL role NEAS logs in as (the others are the
	// cluster's superuser, which no revoke reaches).
	ownRole = "glb_neas"
	// staleBound: a node behind the store for pools.NodeStaleAfter (5 s,
	// from the first report that found it behind) is stale; reports come
	// every second. The 10 s.
	staleBound = 10 * time.Second
	// notifyBound: every node reads the fleet every second, records the
	// state change once, and the recording node delivers it at once.
	notifyBound = staleBound + 2*time.Second
)

// hookAddr is where drill 11's webhook receiver listens: the client host,
// as an operator's alerting would be.
var hookAddr = netip.AddrPortFrom(clientAddr(0), 8080)

// nodeViews is GET /nodes as node n's API answers it.
func (l *lab) nodeViews(n *node) ([]pools.NodeView, error) {
	var vs []pools.NodeView
	err := l.api.call(n, "GET", "/api/v1/nodes", nil, &vs)
	return vs, err
}

func viewOf(vs []pools.NodeView, name string) (pools.NodeView, bool) {
	for _, v := range vs {
		if v.Name == name {
			return v, true
		}
	}
	return pools.NodeView{}, false
}

func describeViews(vs []pools.NodeView) string {
	var b []string
	for _, v := range vs {
		b = append(b, fmt.Sprintf("%s %s rev %d lag %d/%.1fs %s", v.Name, v.State, v.Revision, v.Lag.Revisions, v.Lag.Seconds, v.Why))
	}
	return strings.Join(b, "; ")
}

// nodeEvent is one node notification the receiver took.
type nodeEvent struct {
	at    time.Time
	event pools.Event
	bad   string // what the signature check found wrong
}

func (e nodeEvent) String() string {
	s := fmt.Sprintf("%s %s: %s", e.at.Format("15:04:05.000"), e.event.Type, e.event.Data.Summary)
	if e.bad != "" {
		s += " (BAD: " + e.bad + ")"
	}
	return s
}

// nodeEvents are the deliveries the receiver took, one per event (a
// retried delivery counted once).
func nodeEvents(r *webhooktest.Receiver) []nodeEvent {
	var out []nodeEvent
	seen := map[string]bool{}
	for _, q := range r.Requests("/nodes") {
		e := nodeEvent{at: q.At, bad: q.Bad}
		if err := json.Unmarshal(q.Body, &e.event); err != nil {
			e.bad += " body: " + err.Error()
		}
		if seen[e.event.ID] && e.bad == "" {
			continue
		}
		seen[e.event.ID] = true
		out = append(out, e)
	}
	return out
}

func (l *lab) drillFeedBlocked() result {
	// The drill before may have restarted a node whose RTTs are not yet
	// everyone's (drill 10): the drill starts from a settled lab.
	settled := l.settle(l.base(), l.stale()+propagation+l.sec(5*l.interval))
	d := l.begin(result{zeroWrong: true, noneLost: true})
	if settled != nil {
		return d.failed(settled)
	}
	v := l.nodes[feedVictim]
	var ln net.Listener
	if err := inNS(l.ns("client"), func() (err error) { ln, err = net.Listen("tcp", hookAddr.String()); return err }); err != nil {
		return d.failed(err)
	}
	rcv := webhooktest.Serve(ln)
	defer rcv.Close()

	// Every node serving the store's revision before the block.
	var vs []pools.NodeView
	if !waitFor(10*time.Second, func() bool {
		var err error
		vs, err = l.nodeViews(l.nodes[0])
		serving := err == nil && len(vs) == len(regions)
		for _, x := range vs {
			serving = serving && x.State == pools.NodeServing && x.Lag.Revisions == 0
		}
		return serving
	}) {
		return d.failed(fmt.Errorf("the nodes are not all serving before the drill: %s", describeViews(vs)))
	}
	var sub struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
	}
	if err := l.api.call(l.nodes[1], "POST", "/api/v1/notifications", map[string]any{"name": "lab-nodes",
		"url": "http://" + hookAddr.String() + "/nodes", "events": []string{pools.EventNode}}, &sub); err != nil {
		return d.failed(err)
	}
	rcv.SetSecret("/nodes", sub.Secret)
	// Whatever happens, the subscription goes and the right comes back:
	// the drills after this one start from the lab as it was.
	blocked := false
	defer func() {
		if blocked {
			_ = l.pg.exec("grant select on config_changes to " + ownRole)
		}
		_ = l.api.call(l.nodes[1], "DELETE", "/api/v1/notifications/"+sub.ID, nil, nil)
	}()

	if err := l.pg.exec("revoke select on config_changes from " + ownRole); err != nil {
		return d.failed(err)
	}
	blocked = true
	tWrite, written := l.write(d, l.nodes[0], 10*time.Second)
	ws := everywhere(written)
	ws[feedVictim] = []world{d.base} // NEAS: its snapshot until the grant
	d.tl.add(tWrite, propagation, ws)

	// GET /nodes, through ENAM's API, every 100 ms.
	var lagged, stale time.Duration
	waitFor(staleBound+2*time.Second, func() bool {
		var err error
		if vs, err = l.nodeViews(l.nodes[1]); err != nil {
			return false
		}
		x, _ := viewOf(vs, v.name)
		if lagged == 0 && x.Lag.Revisions > 0 {
			lagged = time.Since(tWrite)
		}
		if x.State == pools.NodeStale && x.Lag.Revisions > 0 && x.Lag.Seconds >= pools.NodeStaleAfter.Seconds() {
			stale = time.Since(tWrite)
		}
		return stale > 0
	})
	d.add("NEAS's lag in GET /nodes after the write it cannot follow", lagged, staleBound, "its next report finds it behind")
	d.add("NEAS stale in GET /nodes", stale, staleBound, fmt.Sprintf("behind for %v; %s", pools.NodeStaleAfter, describeViews(vs)))

	var first time.Duration
	if waitFor(notifyBound, func() bool { return len(nodeEvents(rcv)) > 0 }) {
		first = nodeEvents(rcv)[0].at.Sub(tWrite)
	}
	d.add("its node notification received", first, notifyBound, "signed, checked by the receiver")
	time.Sleep(3 * time.Second) // time for a duplicate to show
	evs := nodeEvents(rcv)
	for _, e := range evs {
		d.notes = append(d.notes, "notification: "+e.String())
	}
	if len(evs) != 1 || evs[0].bad != "" || evs[0].event.Data.Node != v.name || evs[0].event.Data.New != pools.NodeStale {
		d.err = fmt.Errorf("%d node notifications while blocked, want exactly one, signed, saying %s is stale", len(evs), v.name)
	}

	// The right given back: NEAS follows within the revision poll.
	if err := l.pg.exec("grant select on config_changes to " + ownRole); err != nil {
		return d.failed(err)
	}
	blocked = false
	tHeal := time.Now()
	const healBound = 3 * time.Second // the revision poll (2 s), its read and compile
	d.tl.add(tHeal, healBound, everywhere(written))
	rev := func(q query) bool { return q.kind == qRev }
	waitFor(healBound+time.Second, func() bool {
		return !l.client.settledSince(tHeal, feedVictim, rev, func(q query, a string) bool { return a == written.rev }).IsZero()
	})
	var healed time.Duration
	if at := l.client.settledSince(tHeal, feedVictim, rev, func(q query, a string) bool { return a == written.rev }); !at.IsZero() {
		healed = max(at.Sub(tHeal), time.Millisecond)
	}
	d.add("NEAS answers the write after the grant", healed, healBound, "")
	var serving time.Duration
	if waitFor(5*time.Second, func() bool {
		vs, err := l.nodeViews(l.nodes[1])
		x, _ := viewOf(vs, v.name)
		return err == nil && x.State == pools.NodeServing && x.Lag.Revisions == 0
	}) {
		serving = time.Since(tHeal)
	}
	d.add("NEAS serving again in GET /nodes", serving, 0, "")
	if !waitFor(5*time.Second, func() bool { return len(nodeEvents(rcv)) >= 2 }) {
		d.notes = append(d.notes, "no notification of NEAS serving again within 5 s")
	}
	time.Sleep(2 * time.Second)
	evs = nodeEvents(rcv)
	if len(evs) > 1 {
		d.notes = append(d.notes, "notification: "+evs[1].String())
	}
	if d.err == nil && (len(evs) != 2 || evs[1].bad != "" || evs[1].event.Data.Node != v.name || evs[1].event.Data.New != pools.NodeServing) {
		d.err = fmt.Errorf("%d node notifications in all, want two: %s stale, then serving", len(evs), v.name)
	}
	if err := l.settle(written, l.sec(5*l.interval)); err != nil && d.err == nil {
		d.err = err
	}
	return l.end(d)
}
