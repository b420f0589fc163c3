package main

import (
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// Anycast in the lab. A router namespace runs BIRD 2, peered over eBGP
// with every node; each node holds the anycast address on its loopback,
// answers on it and announces it over BGP (glbd's own speaker). The
// router installs the best route in its own namespace's table (no
// kernel of the machine touched): MEDs 10, 20, 30 make WEU the best, then
// ENAM, then NEAS, so that where the traffic goes is one next hop and a
// drill sees it move. The client reaches the anycast address through the
// router.
//
//	rtr:     198.18.5.1    BIRD, AS 65000, forwarding
//	anycast: 198.18.53.53  on every node's lo; nodes are AS 65001
var (
	routerAddr  = netip.MustParseAddr("198.18.5.1")
	anycastAddr = netip.MustParseAddr("198.18.53.53")
)

const (
	routerASN = 65000
	nodeASN   = 65001
	// holdTime is the lab's BGP hold time, in glbd and BIRD: a node killed
	// outright is dropped after it.
	holdTime = 3 * time.Second
	// drainGrace is the nodes' --drain-grace in the lab.
	drainGrace = 2 * time.Second
	// anycastRate is the anycast client's queries per second.
	anycastRate = 500
)

// nodeMED is node i's MED: lower wins.
func nodeMED(i int) int { return 10 * (i + 1) }

// bgpFlags are a node's BGP flags in the lab.
func bgpFlags(i int) []string {
	a := nodeAddr(i).String()
	return []string{"--bgp-asn", fmt.Sprint(nodeASN), "--bgp-router-id", a,
		"--bgp-peer", fmt.Sprintf("%s,%d", routerAddr, routerASN), "--anycast", anycastAddr.String() + "/32",
		"--bgp-med", fmt.Sprint(nodeMED(i)), "--bgp-hold-time", holdTime.String(), "--drain-grace", drainGrace.String()}
}

// router is BIRD in the router namespace.
type router struct {
	ns   string
	dir  string
	cmd  *exec.Cmd
	done <-chan error
}

// setUpAnycast puts the anycast address on every node's loopback, lets
// the router forward, and routes the client's anycast traffic through it.
func (l *lab) setUpAnycast() error {
	for i := range regions {
		if err := sh("", "ip", "-n", l.regionNS(i), "addr", "add", anycastAddr.String()+"/32", "dev", "lo"); err != nil {
			return err
		}
	}
	// The router forwards, and the client keeps going through it: the
	// next hops are on the client's link, so the router would send it
	// ICMP redirects, and the client would then go straight to the node
	// it was redirected to, whatever the routes say.
	for _, kv := range []struct{ ns, key string }{
		{"rtr", "net.ipv4.ip_forward=1"}, {"rtr", "net.ipv4.conf.all.send_redirects=0"}, {"rtr", "net.ipv4.conf.eth0.send_redirects=0"},
		{"client", "net.ipv4.conf.all.accept_redirects=0"}, {"client", "net.ipv4.conf.eth0.accept_redirects=0"},
	} {
		if err := sh("", "ip", "netns", "exec", l.ns(kv.ns), "sysctl", "-q", "-w", kv.key); err != nil {
			return err
		}
	}
	return sh("", "ip", "-n", l.ns("client"), "route", "add", anycastAddr.String()+"/32", "via", routerAddr.String())
}

func birdConf(sock string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "log stderr all;\nrouter id %s;\nprotocol device {}\n", routerAddr)
	// The kernel protocol writes the router namespace's own table, which
	// is what forwards the client's queries.
	fmt.Fprintf(&b, "protocol kernel { ipv4 { export all; import none; }; scan time 10; }\n")
	for i := range regions {
		// A session lost on an error (the hold time ran out) is taken up
		// again within a second, not BIRD's default minute.
		fmt.Fprintf(&b, "protocol bgp %s {\n  local %s as %d;\n  neighbor %s as %d;\n  passive on;\n  hold time %d;\n  error wait time 1, 5;\n",
			strings.ToLower(regions[i]), routerAddr, routerASN, nodeAddr(i), nodeASN, int(holdTime/time.Second))
		fmt.Fprintf(&b, "  ipv4 { import filter { if net = %s/32 then accept; reject; }; export none; };\n}\n", anycastAddr)
	}
	return b.String()
}

func (l *lab) startRouter() (*router, error) {
	r := &router{ns: l.ns("rtr"), dir: filepath.Join(l.dir, "bird")}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return nil, err
	}
	conf := filepath.Join(r.dir, "bird.conf")
	if err := os.WriteFile(conf, []byte(birdConf(r.sock())), 0o644); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(r.dir, "bird.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	bird := "bird"
	if _, err := exec.LookPath(bird); err != nil {
		bird = "/usr/sbin/bird"
	}
	r.cmd = exec.Command(bird, "-f", "-c", conf, "-s", r.sock(), "-P", filepath.Join(r.dir, "bird.pid"))
	r.cmd.Stdout, r.cmd.Stderr = logf, logf
	if r.done, err = startIn(r.ns, r.cmd); err != nil {
		return nil, err
	}
	if !waitFor(10*time.Second, func() bool { _, err := r.birdc("show status"); return err == nil }) {
		return nil, fmt.Errorf("bird did not start in the router namespace: %s", r.logTail())
	}
	return r, nil
}

func (r *router) sock() string { return filepath.Join(r.dir, "bird.ctl") }

func (r *router) birdc(cmd string) (string, error) {
	birdc := "birdc"
	if _, err := exec.LookPath(birdc); err != nil {
		birdc = "/usr/sbin/birdc"
	}
	out, err := exec.Command(birdc, append([]string{"-s", r.sock()}, strings.Fields(cmd)...)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("birdc %s: %v: %s", cmd, err, out)
	}
	return string(out), nil
}

func (r *router) logTail() string {
	b, _ := os.ReadFile(filepath.Join(r.dir, "bird.log"))
	return string(b)
}

func (r *router) stop() {
	if r.cmd != nil {
		stopGracefully(r.cmd, r.done, os.Interrupt, 5*time.Second)
		r.cmd = nil
	}
}

// nextHop is the node the router forwards the anycast address to, as its
// forwarding table says (-1: no route).
func (r *router) nextHop() int {
	out, err := shOut("ip", "-n", r.ns, "-4", "route", "show", anycastAddr.String()+"/32")
	if err != nil {
		return -1
	}
	f := strings.Fields(out)
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "via" {
			if a, err := netip.ParseAddr(f[i+1]); err == nil {
				return regionOf(a)
			}
		}
	}
	return -1
}

// waitNextHop waits until the router forwards to node want (-1: nowhere)
// and returns how long after since that was, or 0 when it was not within.
func (r *router) waitNextHop(since time.Time, want int, within time.Duration) time.Duration {
	for {
		if r.nextHop() == want {
			return max(time.Since(since), time.Millisecond)
		}
		if time.Since(since) > within {
			return 0
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// announcers are the nodes whose route the router holds.
func (r *router) announcers() []string {
	out, _ := r.birdc("show route " + anycastAddr.String() + "/32 all")
	var from []string
	for i := range regions {
		if strings.Contains(out, "["+strings.ToLower(regions[i])+" ") {
			from = append(from, regions[i])
		}
	}
	return from
}

// anycastClient asks the anycast address at a steady rate from the client
// namespace and keeps, for every query, whether an answer came, which
// node gave it (NSID) and its rcode.
type anycastClient struct {
	conn *net.UDPConn
	mu   sync.Mutex
	sent map[uint16]*anycastSample
	all  []*anycastSample
	stop chan struct{}
	wg   sync.WaitGroup
}

type anycastSample struct {
	at      time.Time
	id      uint16
	got     bool
	node    string
	rcode   int
	answers int
}

func startAnycastClient(ns string) (*anycastClient, error) {
	c := &anycastClient{sent: map[uint16]*anycastSample{}, stop: make(chan struct{})}
	err := inNS(ns, func() error {
		var err error
		c.conn, err = net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(clientAddr(0), 0)),
			net.UDPAddrFromAddrPort(netip.AddrPortFrom(anycastAddr, 53)))
		return err
	})
	if err != nil {
		return nil, err
	}
	c.wg.Add(2)
	go c.send()
	go c.receive()
	return c, nil
}

func (c *anycastClient) send() {
	defer c.wg.Done()
	t := time.NewTicker(time.Second / anycastRate)
	defer t.Stop()
	var id uint16
	m := new(dns.Msg)
	m.SetQuestion("www."+zoneName, dns.TypeA)
	m.SetEdns0(1232, false)
	m.IsEdns0().Option = append(m.IsEdns0().Option, &dns.EDNS0_NSID{Code: dns.EDNS0NSID})
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		id++
		m.Id = id
		b, err := m.Pack()
		if err != nil {
			continue
		}
		s := &anycastSample{at: time.Now(), id: id}
		c.mu.Lock()
		c.sent[id] = s
		c.all = append(c.all, s)
		c.mu.Unlock()
		_, _ = c.conn.Write(b)
	}
}

func (c *anycastClient) receive() {
	defer c.wg.Done()
	buf := make([]byte, 4096)
	for {
		n, err := c.conn.Read(buf)
		if err != nil {
			select {
			case <-c.stop:
				return
			default:
			}
			continue // ICMP errors while a node goes
		}
		var m dns.Msg
		if m.Unpack(buf[:n]) != nil {
			continue
		}
		node := ""
		if o := m.IsEdns0(); o != nil {
			for _, opt := range o.Option {
				if ns, ok := opt.(*dns.EDNS0_NSID); ok {
					b, _ := hex.DecodeString(ns.Nsid)
					node = string(b)
				}
			}
		}
		c.mu.Lock()
		// An answer later than a second is a lost query: the id may be
		// reused 65536 queries later, long after.
		if s, ok := c.sent[m.Id]; ok && !s.got && time.Since(s.at) < time.Second {
			s.got, s.node, s.rcode, s.answers = true, node, m.Rcode, len(m.Answer)
		}
		c.mu.Unlock()
	}
}

func (c *anycastClient) close() {
	close(c.stop)
	_ = c.conn.Close()
	c.wg.Wait()
}

// anycastCounts are the queries sent in [from, to), a second before the
// end counted only once it has passed.
type anycastCounts struct {
	counts
	byNode map[string]int
	// lostSpan is from the first lost query to the last.
	lostSpan time.Duration
}

func (c *anycastClient) judge(from, to time.Time) anycastCounts {
	k := anycastCounts{byNode: map[string]int{}}
	var firstLost, lastLost time.Time
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.all {
		if s.at.Before(from) || !s.at.Before(to) {
			continue
		}
		k.sent++
		if !s.got {
			if firstLost.IsZero() {
				firstLost = s.at
			}
			lastLost = s.at
			continue
		}
		k.answered++
		k.byNode[s.node]++
		if s.rcode != dns.RcodeSuccess || s.answers == 0 {
			k.wrong++
			if len(k.examples) < 5 {
				k.examples = append(k.examples, fmt.Sprintf("%s from %q: %s, %d answers", s.at.Format("15:04:05.000"), s.node, dns.RcodeToString[s.rcode], s.answers))
			}
		}
	}
	if !firstLost.IsZero() {
		k.lostSpan = lastLost.Sub(firstLost) + time.Second/anycastRate
	}
	return k
}

func (k anycastCounts) String() string {
	return fmt.Sprintf("anycast client (%d q/s): %d sent, %d answered, %d wrong, answered by %v", anycastRate, k.sent, k.answered, k.wrong, k.byNode)
}
