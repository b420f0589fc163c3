// Command baseline is the Go ceiling bench/dns.sh measures glbd against:
// a minimal authoritative server on github.com/miekg/dns answering static
// example.com data, with no policy work per query.
//
//	www, hc, geo.example.com  A (TTL 30); static.example.com A (TTL 300)
//	other names under example.com: NXDOMAIN with the SOA; other zones: REFUSED
package main

import (
	"flag"
	"log"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"github.com/miekg/dns"
)

const zone = "example.com."

func mustRR(s string) dns.RR {
	rr, err := dns.NewRR(s)
	if err != nil {
		panic(err)
	}
	return rr
}

var (
	records = map[string]dns.RR{}
	soa     = mustRR("example.com. 3600 IN SOA ns1.example.com. hostmaster.example.com. 1 7200 3600 1209600 300")
)

func init() {
	for _, s := range []string{
		"www.example.com. 30 IN A 192.0.2.1",
		"hc.example.com. 30 IN A 192.0.2.11",
		"geo.example.com. 30 IN A 192.0.2.21",
		"static.example.com. 300 IN A 192.0.2.100",
		"ns1.example.com. 300 IN A 127.0.0.1",
	} {
		rr := mustRR(s)
		records[rr.Header().Name] = rr
	}
}

func handle(w dns.ResponseWriter, r *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative, m.Compress = true, true
	if len(r.Question) != 1 {
		m.Rcode = dns.RcodeFormatError
		_ = w.WriteMsg(m)
		return
	}
	q := r.Question[0]
	name := strings.ToLower(q.Name)
	switch rr, ok := records[name]; {
	case ok && q.Qtype == dns.TypeA:
		m.Answer = append(m.Answer, rr)
	case ok:
		m.Ns = append(m.Ns, soa)
	case name == zone && q.Qtype == dns.TypeSOA:
		m.Answer = append(m.Answer, soa)
	case name == zone:
		m.Ns = append(m.Ns, soa)
	case dns.IsSubDomain(zone, name):
		m.Rcode = dns.RcodeNameError
		m.Ns = append(m.Ns, soa)
	default:
		m.Authoritative = false
		m.Rcode = dns.RcodeRefused
	}
	_ = w.WriteMsg(m)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:5304", "UDP and TCP listen address")
	listeners := flag.Int("listeners", runtime.GOMAXPROCS(0), "SO_REUSEPORT UDP listeners")
	flag.Parse()
	errc := make(chan error, *listeners+1)
	var servers []*dns.Server
	start := func(s *dns.Server) {
		started := make(chan struct{})
		s.NotifyStartedFunc = func() { close(started) }
		go func() { errc <- s.ListenAndServe() }()
		select {
		case <-started:
		case err := <-errc:
			log.Fatalf("listen %s %s: %v", s.Net, s.Addr, err)
		}
		servers = append(servers, s)
	}
	for range max(*listeners, 1) {
		start(&dns.Server{Addr: *addr, Net: "udp", Handler: dns.HandlerFunc(handle), ReusePort: true, UDPSize: 4096})
	}
	start(&dns.Server{Addr: *addr, Net: "tcp", Handler: dns.HandlerFunc(handle), ReusePort: true})
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-sig:
	case err := <-errc:
		log.Printf("server: %v", err)
	}
	for _, s := range servers {
		_ = s.Shutdown()
	}
}
