package main

import (
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
)

const zoneName = "glb.lab."

// query is one of the questions the client host keeps asking every node.
type query struct {
	kind   int
	client int // the region whose client address asks
}

const (
	qFailover = iota // www: failover order WEU, ENAM, NEAS
	qNearest         // near: dynamic_latency
	qRev             // rev: a static record the drills rewrite
)

func (q query) name() string {
	switch q.kind {
	case qFailover:
		return "www." + zoneName
	case qNearest:
		return "near." + zoneName
	default:
		return "rev." + zoneName
	}
}

func (q query) String() string {
	if q.kind == qNearest {
		return "near(" + regions[q.client] + " client)"
	}
	return strings.TrimSuffix(q.name(), "."+zoneName)
}

// queries: the failover name and the record from the WEU client, the
// dynamic_latency name from each region's client.
var queries = []query{{qFailover, 0}, {qNearest, 0}, {qNearest, 1}, {qNearest, 2}, {qRev, 0}}

// sample is one query sent: when, to which node, and what came back
// ("" when nothing did within the timeout).
type sample struct {
	at     time.Time
	node   int
	q      int // index in queries
	answer string
}

// client is the client host: it asks every node every query, every
// period, over UDP from the client namespace, and keeps every sample.
type client struct {
	ns     string
	period time.Duration
	mu     sync.Mutex
	log    []sample
	stopc  chan struct{}
	wg     sync.WaitGroup
}

func startClient(ns string, period time.Duration) (*client, error) {
	c := &client{ns: ns, period: period, stopc: make(chan struct{})}
	for n := range regions {
		for qi, q := range queries {
			conn, err := c.dial(clientAddr(q.client), nodeAddr(n))
			if err != nil {
				c.stop()
				return nil, err
			}
			c.wg.Add(1)
			go c.loop(conn, n, qi)
		}
	}
	return c, nil
}

func (c *client) dial(src, dst netip.Addr) (*net.UDPConn, error) {
	var conn *net.UDPConn
	err := inNS(c.ns, func() error {
		var err error
		conn, err = net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(src, 0)),
			net.UDPAddrFromAddrPort(netip.AddrPortFrom(dst, 53)))
		return err
	})
	return conn, err
}

func (c *client) loop(conn *net.UDPConn, n, qi int) {
	defer c.wg.Done()
	defer conn.Close()
	t := time.NewTicker(c.period)
	defer t.Stop()
	buf := make([]byte, 1500)
	for {
		at := time.Now()
		answer := exchange(conn, queries[qi].name(), buf)
		c.mu.Lock()
		c.log = append(c.log, sample{at: at, node: n, q: qi, answer: answer})
		c.mu.Unlock()
		select {
		case <-c.stopc:
			return
		case <-t.C:
		}
	}
}

// exchange asks name A and returns the answer's one address, or its
// rcode when it has none, or "" when no answer came within a second.
func exchange(conn *net.UDPConn, name string, buf []byte) string {
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	m.RecursionDesired = false
	b, err := m.Pack()
	if err != nil {
		return ""
	}
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write(b); err != nil {
		return ""
	}
	for {
		k, err := conn.Read(buf)
		if err != nil {
			return ""
		}
		r := new(dns.Msg)
		if r.Unpack(buf[:k]) != nil || r.Id != m.Id {
			continue // a late answer to an earlier query
		}
		var addrs []string
		for _, rr := range r.Answer {
			if a, ok := rr.(*dns.A); ok {
				addrs = append(addrs, a.A.String())
			}
		}
		if r.Rcode != dns.RcodeSuccess || len(addrs) == 0 {
			return dns.RcodeToString[r.Rcode] + fmt.Sprintf("(%d answers)", len(addrs))
		}
		sort.Strings(addrs)
		return strings.Join(addrs, ",")
	}
}

// probe asks node n once; true when any DNS answer came back.
func (c *client) probe(n int) bool {
	conn, err := c.dial(clientAddr(0), nodeAddr(n))
	if err != nil {
		return false
	}
	defer conn.Close()
	return exchange(conn, zoneName, make([]byte, 1500)) != ""
}

func (c *client) stop() {
	select {
	case <-c.stopc:
	default:
		close(c.stopc)
	}
	c.wg.Wait()
}

// since returns the samples sent at or after t.
func (c *client) since(t time.Time) []sample {
	c.mu.Lock()
	defer c.mu.Unlock()
	// The log is in the order the exchanges ended, not the order they
	// were sent (at): a search for t could take in an exchange sent just
	// before it, which the drill starting at t judged against no step
	// at all (one wrong answer in a drill's first millisecond).
	var out []sample
	for _, s := range c.log {
		if !s.at.Before(t) {
			out = append(out, s)
		}
	}
	return out
}

// counts is what the client saw during a drill.
type counts struct {
	sent, answered, wrong int
	examples              []string // the first few wrong answers
}

func (k counts) String() string {
	return fmt.Sprintf("client: %d sent, %d answered, %d wrong", k.sent, k.answered, k.wrong)
}

// judge counts the samples from t on against the timeline.
func (c *client) judge(from time.Time, tl *timeline) counts {
	var k counts
	for _, s := range c.since(from) {
		k.sent++
		if s.answer == "" {
			continue
		}
		k.answered++
		if !tl.ok(s.node, queries[s.q], s.at, s.answer) {
			k.wrong++
			if len(k.examples) < 5 {
				k.examples = append(k.examples, fmt.Sprintf("%s to %s at %s: %s",
					queries[s.q], regions[s.node], s.at.Format("15:04:05.000"), s.answer))
			}
		}
	}
	return k
}

// settledSince is, for node n and the queries matching which, the time
// from which on every answer satisfies good: when the node had followed
// a change for good, taken per query and the latest of them. Zero when
// some matching query has no answer since from, or its last answer does
// not satisfy good.
func (c *client) settledSince(from time.Time, n int, which func(query) bool, good func(query, string) bool) time.Time {
	settled := map[int]time.Time{}
	seen := map[int]bool{}
	for _, s := range c.since(from) {
		if s.node != n || !which(queries[s.q]) || s.answer == "" {
			continue
		}
		seen[s.q] = true
		if !good(queries[s.q], s.answer) {
			delete(settled, s.q)
		} else if _, ok := settled[s.q]; !ok {
			settled[s.q] = s.at
		}
	}
	var latest time.Time
	for qi, q := range queries {
		if !which(q) {
			continue
		}
		at, ok := settled[qi]
		if !seen[qi] || !ok {
			return time.Time{}
		}
		if at.After(latest) {
			latest = at
		}
	}
	return latest
}
