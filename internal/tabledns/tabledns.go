// Package tabledns is a small real DNS server for tests: it answers A and
// AAAA queries from a table the test changes while it runs, over UDP and
// TCP on 127.0.0.1, so that what a name resolves to can change between
// two lookups (DNS rebinding) and a resolver pointed at it sees that.
package tabledns

import (
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"
)

// Server answers from its table; names not in it are NXDOMAIN.
type Server struct {
	// Addr is the IP:port it listens on, UDP and TCP.
	Addr string
	mu   sync.Mutex
	tab  map[string][]netip.Addr
	asks map[string]int
}

// Start starts a server on 127.0.0.1 (one port, UDP and TCP), shut down
// when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{tab: map[string][]netip.Addr{}, asks: map[string]int{}}
	// One port for both: the UDP port the kernel picks may be taken in
	// TCP, then another is tried.
	var pc net.PacketConn
	var ln net.Listener
	for try := 0; ; try++ {
		var err error
		if pc, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		if ln, err = net.Listen("tcp", pc.LocalAddr().String()); err == nil {
			break
		}
		pc.Close()
		if try == 20 {
			t.Fatal(err)
		}
	}
	s.Addr = pc.LocalAddr().String()
	for _, srv := range []*dns.Server{{PacketConn: pc, Handler: s}, {Listener: ln, Handler: s}} {
		started := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(started) }
		go func() { _ = srv.ActivateAndServe() }()
		<-started
		t.Cleanup(func() { _ = srv.Shutdown() })
	}
	return s
}

// Set makes name resolve to addrs (none: NXDOMAIN).
func (s *Server) Set(name string, addrs ...string) {
	var as []netip.Addr
	for _, a := range addrs {
		as = append(as, netip.MustParseAddr(a))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tab[dns.CanonicalName(name)] = as
}

// Asked is how many queries for name were answered.
func (s *Server) Asked(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asks[dns.CanonicalName(name)]
}

// ServeDNS answers one query from the table, with a TTL of 0 so that no
// resolver keeps an answer.
func (s *Server) ServeDNS(w dns.ResponseWriter, q *dns.Msg) {
	m := new(dns.Msg).SetReply(q)
	m.Authoritative = true
	if len(q.Question) != 1 {
		m.Rcode = dns.RcodeFormatError
		_ = w.WriteMsg(m)
		return
	}
	qq := q.Question[0]
	name := strings.ToLower(qq.Name)
	s.mu.Lock()
	addrs, ok := s.tab[name]
	s.asks[name]++
	s.mu.Unlock()
	if !ok || len(addrs) == 0 {
		m.Rcode = dns.RcodeNameError
	}
	for _, a := range addrs {
		hdr := dns.RR_Header{Name: qq.Name, Class: dns.ClassINET, Ttl: 0}
		switch {
		case qq.Qtype == dns.TypeA && a.Is4():
			hdr.Rrtype = dns.TypeA
			m.Answer = append(m.Answer, &dns.A{Hdr: hdr, A: a.AsSlice()})
		case qq.Qtype == dns.TypeAAAA && a.Is6():
			hdr.Rrtype = dns.TypeAAAA
			m.Answer = append(m.Answer, &dns.AAAA{Hdr: hdr, AAAA: a.AsSlice()})
		}
	}
	_ = w.WriteMsg(m)
}
