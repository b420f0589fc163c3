package main

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/net/dns/dnsmessage"

	"github.com/glb-dns/glb/bgp"
	"github.com/glb-dns/glb/internal/promset"
	"github.com/glb-dns/glb/pools"
)

// The self-probe: every selfProbeEvery the node asks its own listener;
// selfProbeFailures failures in a row withdraw its routes, one success
// announces them again.
const (
	selfProbeEvery    = time.Second
	selfProbeTimeout  = 500 * time.Millisecond
	selfProbeFailures = 3
)

// anycast announces the node's prefixes while it can answer correctly:
// its listeners bound (it starts after them), a snapshot served, not
// draining or stopping, its own probe answered, and the snapshot no older
// than --max-stale when that is set. It is the fleet's routes.
type anycast struct {
	log      *slog.Logger
	sp       *bgp.Speaker
	src      anycastSource
	maxStale time.Duration
	probeTo  netip.AddrPort

	mu       sync.Mutex
	draining bool
	failures int    // self-probes failed in a row; starts unproven
	why      string // why the routes are withdrawn ("" while announced)

	probes *prometheus.CounterVec
}

// anycastSource is what the node serves, as anycast sees it.
type anycastSource interface {
	// serving: a snapshot is served, and the apex of its first zone ("":
	// none).
	serving() (zone string, ok bool)
	// confirmedAt is when the snapshot was last known to be the store's.
	confirmedAt() time.Time
}

func (n *node) serving() (string, bool) {
	c := n.cur.Load()
	if c == nil {
		return "", false
	}
	if zs := c.snap.Config().Zones; len(zs) > 0 {
		return zs[0].Name, true
	}
	return "", true
}

func (n *node) confirmedAt() time.Time {
	if at := n.confirmed.Load(); at != 0 {
		return time.Unix(0, at)
	}
	return time.Time{}
}

func newAnycast(ctx context.Context, sc bgp.Config, maxStale time.Duration, log *slog.Logger, src anycastSource, listener netip.AddrPort, reg prometheus.Registerer) (*anycast, error) {
	sc.Logger, sc.Registerer = log, reg
	sp, err := bgp.Start(ctx, sc)
	if err != nil {
		return nil, err
	}
	set := promset.New("bgp")
	a := &anycast{
		log: log.With("component", "anycast"), sp: sp, src: src, maxStale: maxStale,
		probeTo: probeAddr(listener), failures: selfProbeFailures, why: "starting",
		probes: set.CounterVec("self_probes_total", "The node's queries to its own DNS listener, by result (ok, failed).", "result"),
	}
	a.probes.WithLabelValues("ok")
	a.probes.WithLabelValues("failed")
	reg.MustRegister(set.Collectors()...)
	return a, nil
}

// probeAddr is where the node reaches its own listener: a wildcard
// address is asked on loopback.
func probeAddr(ap netip.AddrPort) netip.AddrPort {
	switch a := ap.Addr(); {
	case a.IsUnspecified() && a.Is4():
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), ap.Port())
	case a.IsUnspecified():
		return netip.AddrPortFrom(netip.IPv6Loopback(), ap.Port())
	}
	return ap
}

// run probes the node every second and keeps the announcement in step
// until ctx ends.
func (a *anycast) run(ctx context.Context) {
	t := time.NewTicker(selfProbeEvery)
	defer t.Stop()
	for {
		err := a.probe(ctx)
		a.mu.Lock()
		if err != nil {
			a.failures++
			a.probes.WithLabelValues("failed").Inc()
			if a.failures <= selfProbeFailures {
				a.log.Warn("self-probe failed", "to", a.probeTo, "failures", a.failures, "err", err)
			}
		} else {
			a.failures = 0
			a.probes.WithLabelValues("ok").Inc()
		}
		a.mu.Unlock()
		a.decide()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// SetDraining withdraws the routes at once (true) or lets them be
// announced again when the node can answer (false).
func (a *anycast) SetDraining(d bool) {
	a.mu.Lock()
	a.draining = d
	a.mu.Unlock()
	a.decide()
}

// decide announces or withdraws as the node's state asks.
func (a *anycast) decide() {
	a.mu.Lock()
	defer a.mu.Unlock()
	why := a.blocked(time.Now())
	if why == a.why {
		return
	}
	if err := a.sp.Announce(why == ""); err != nil {
		a.log.Error("bgp", "err", err)
		return
	}
	if why == "" {
		a.log.Info("anycast announced: the node answers", "prefixes", a.sp.Prefixes())
	} else {
		a.log.Info("anycast withdrawn", "why", why)
	}
	a.why = why
}

// blocked is why the node may not be announced at now, "" when it may;
// a.mu is held.
func (a *anycast) blocked(now time.Time) string {
	_, ok := a.src.serving()
	switch {
	case a.draining:
		return "draining"
	case !ok:
		return "no snapshot: neither the store nor a last good file answered"
	case a.failures >= selfProbeFailures:
		return fmt.Sprintf("self-probe failed %d times", a.failures)
	}
	if at := a.src.confirmedAt(); a.maxStale > 0 && !at.IsZero() && now.Sub(at) > a.maxStale {
		return fmt.Sprintf("snapshot older than --max-stale %v", a.maxStale)
	}
	return ""
}

// probe asks the node's own listener for the SOA of the first zone it
// serves (its answer must be authoritative) or, with no zone, for the
// root's (any answer but SERVFAIL is the right one then).
func (a *anycast) probe(ctx context.Context) error {
	zone := "."
	if z, _ := a.src.serving(); z != "" {
		zone = dnsName(z)
	}
	name, err := dnsmessage.NewName(zone)
	if err != nil {
		return err
	}
	id := uint16(rand.Uint32())
	q, err := (&dnsmessage.Message{
		Header:    dnsmessage.Header{ID: id},
		Questions: []dnsmessage.Question{{Name: name, Type: dnsmessage.TypeSOA, Class: dnsmessage.ClassINET}},
	}).Pack()
	if err != nil {
		return err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "udp", a.probeTo.String())
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(selfProbeTimeout))
	if _, err := conn.Write(q); err != nil {
		return err
	}
	buf := make([]byte, 4096)
	for {
		nr, err := conn.Read(buf)
		if err != nil {
			return err
		}
		var p dnsmessage.Parser
		h, err := p.Start(buf[:nr])
		if err != nil || h.ID != id || !h.Response {
			continue
		}
		switch {
		case h.RCode == dnsmessage.RCodeServerFailure:
			return fmt.Errorf("%s SOA: SERVFAIL", zone)
		case zone != "." && (h.RCode != dnsmessage.RCodeSuccess || !h.Authoritative):
			return fmt.Errorf("%s SOA: %v, authoritative %v", zone, h.RCode, h.Authoritative)
		}
		return nil
	}
}

func dnsName(s string) string {
	if len(s) == 0 || s[len(s)-1] != '.' {
		return s + "."
	}
	return s
}

// Status is the sessions and the prefixes announced, for the node's
// report.
func (a *anycast) Status() pools.NodeBGP {
	st := pools.NodeBGP{Sessions: []pools.BGPSession{}, Announced: []string{}}
	for _, s := range a.sp.Sessions() {
		st.Sessions = append(st.Sessions, pools.BGPSession{Peer: s.Peer.String(), ASN: s.ASN, State: s.State})
	}
	if a.sp.Announced() {
		for _, p := range a.sp.Prefixes() {
			st.Announced = append(st.Announced, p.String())
		}
	}
	return st
}

// stop withdraws and closes the sessions.
func (a *anycast) stop() { a.sp.Stop() }
