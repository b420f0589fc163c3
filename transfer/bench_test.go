package transfer_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/dnsserver"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/pools/embedded/embeddedtest"
	"github.com/glb-dns/glb/steering"
	"github.com/glb-dns/glb/transfer"
)

// bigZone is a master file of n records of big.example: A, AAAA and TXT
// in turn; variant changes every address, so that two variants differ in
// every record.
func bigZone(n, variant int) []byte {
	var b bytes.Buffer
	b.WriteString("$ORIGIN big.example.\n$TTL 300\n")
	for i := range n {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "h%d A 10.%d.%d.%d\n", i, variant, i>>8&255, i&255)
		case 1:
			fmt.Fprintf(&b, "h%d AAAA 2001:db8:%x:%x::%x\n", i, variant, i>>16, i&0xffff)
		default:
			fmt.Fprintf(&b, "h%d TXT \"record %d of variant %d\"\n", i, i, variant)
		}
	}
	return b.Bytes()
}

// node is the pieces of a glb node a zone moves through, in one process:
// the API on a real store, the DNS server on 127.0.0.1 and the transfer
// service, fed each snapshot as glbd feeds them.
type node struct {
	st   pools.Store
	api  *httptest.Server
	dns  *dnsserver.Server
	xfr  *transfer.Service
	zone string
}

func newNode(b *testing.B) *node {
	b.Helper()
	n := &node{st: embeddedtest.Open(b)}
	n.xfr = transfer.New(transfer.Config{Keys: n.st})
	b.Cleanup(n.xfr.Close)
	srv, err := dnsserver.New(dnsserver.Config{Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler), Transfers: n.xfr})
	if err != nil {
		b.Fatal(err)
	}
	n.dns = srv
	z, err := n.st.Create(context.Background(), &pools.Zone{Name: "big.example", Nameservers: []string{"ns1.big.example"}, TTL: 300,
		SOA:      pools.SOA{Refresh: 3600, Retry: 600, Expire: 86400, Minimum: 60},
		Records:  []pools.Record{{Name: "ns1.big.example", Type: "A", Content: "192.0.2.53"}},
		Transfer: &pools.ZoneTransfer{Allow: []string{"127.0.0.0/8"}}})
	if err != nil {
		b.Fatal(err)
	}
	n.zone = z.ObjectMeta().ID
	n.publish(b)
	if err := srv.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	n.api = httptest.NewServer(api.New(api.Options{Store: n.st}))
	b.Cleanup(n.api.Close)
	return n
}

// publish compiles the store's configuration and serves it, as a node's
// loop does after a change, and has the transfer service observe it.
func (n *node) publish(b *testing.B) {
	b.Helper()
	cfg, err := n.st.Config(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	st, err := steering.Compile(cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	snap, err := dnsserver.Compile(st, nil)
	if err != nil {
		b.Fatal(err)
	}
	n.dns.Publish(snap)
	n.xfr.Observe(st)
}

// load sends one query every interval to the node's DNS server over UDP
// until stop, and counts the queries sent and the answers that came back.
type load struct {
	sent, answered atomic.Int64
	stop           chan struct{}
	done           sync.WaitGroup
}

func startLoad(b *testing.B, addr netip.AddrPort, interval time.Duration) *load {
	b.Helper()
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(addr))
	if err != nil {
		b.Fatal(err)
	}
	l := &load{stop: make(chan struct{})}
	q := new(dns.Msg)
	q.SetQuestion("ns1.big.example.", dns.TypeA)
	raw, _ := q.Pack()
	l.done.Add(2)
	go func() {
		defer l.done.Done()
		buf := make([]byte, 1500)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
			l.answered.Add(1)
		}
	}()
	go func() {
		defer l.done.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-l.stop:
				// Answers still on their way get a moment to arrive.
				_ = c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
				return
			case <-t.C:
				if _, err := c.Write(raw); err == nil {
					l.sent.Add(1)
				}
			}
		}
	}()
	return l
}

func (l *load) finish(b *testing.B) {
	l.stop <- struct{}{}
	l.done.Wait()
	sent, answered := l.sent.Load(), l.answered.Load()
	if sent > 0 {
		b.ReportMetric(float64(answered)/float64(sent), "answered/sent")
	}
	b.ReportMetric(float64(sent), "queries")
}

const bigRecords = 100_000

// BenchmarkImport100k imports a 100,000-record master file through the
// API (parse, plan, validate, one store write) and publishes the result,
// while a client sends the node 2,000 queries a second; answered/sent is
// the share of them answered.
func BenchmarkImport100k(b *testing.B) {
	n := newNode(b)
	files := [2][]byte{bigZone(bigRecords, 1), bigZone(bigRecords, 2)}
	l := startLoad(b, n.dns.Addr(), 500*time.Microsecond)
	var importing, publishing time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		req, _ := http.NewRequest("POST", n.api.URL+"/api/v1/zones/"+n.zone+"/import?mode=replace", bytes.NewReader(files[i%2]))
		req.Header.Set("Content-Type", "text/dns")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var body bytes.Buffer
		_, _ = body.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(body.String(), `"applied":true`) {
			b.Fatalf("import: %d %.300s", resp.StatusCode, body.String())
		}
		importing += time.Since(start)
		start = time.Now()
		n.publish(b)
		publishing += time.Since(start)
	}
	b.StopTimer()
	b.ReportMetric(importing.Seconds()/float64(b.N), "import-s/op")
	b.ReportMetric(publishing.Seconds()/float64(b.N), "publish-s/op")
	l.finish(b)
	b.ReportMetric(bigRecords, "records")
}

// BenchmarkAXFR100k transfers a 100,000-record zone over TCP from the
// DNS server, while a client sends it 2,000 queries a second.
func BenchmarkAXFR100k(b *testing.B) {
	n := newNode(b)
	req, _ := http.NewRequest("POST", n.api.URL+"/api/v1/zones/"+n.zone+"/import?mode=replace", bytes.NewReader(bigZone(bigRecords, 1)))
	req.Header.Set("Content-Type", "text/dns")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("import: %v %v", err, resp)
	}
	resp.Body.Close()
	n.publish(b)
	l := startLoad(b, n.dns.Addr(), 500*time.Microsecond)
	b.ResetTimer()
	for range b.N {
		tr := new(dns.Transfer)
		m := new(dns.Msg)
		m.SetAxfr("big.example.")
		env, err := tr.In(m, n.dns.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		got := 0
		for e := range env {
			if e.Error != nil {
				b.Fatal(e.Error)
			}
			got += len(e.RR)
		}
		if got != bigRecords+3 { // the SOA twice and the apex NS
			b.Fatalf("AXFR carried %d records, want %d", got, bigRecords+3)
		}
	}
	b.StopTimer()
	l.finish(b)
	b.ReportMetric(bigRecords, "records")
}
