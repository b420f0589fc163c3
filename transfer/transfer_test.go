package transfer_test

import (
	"context"
	"encoding/json"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/pools/embedded/embeddedtest"
	"github.com/glb-dns/glb/steering"
	"github.com/glb-dns/glb/transfer"
)

const secret = "c2VjcmV0IHNlY3JldCBzZWNyZXQgc2VjcmV0IQ=="

// world is a real store with a zone that transfers and a load balancer
// on two pools, and the service under test observing its snapshots.
type world struct {
	t      *testing.T
	st     pools.Store
	svc    *transfer.Service
	zone   *pools.Zone
	lb     string
	pools  [2]string // p1 (answers while healthy), p2
	health *pools.Health
}

func newWorld(t *testing.T, tr *pools.ZoneTransfer) *world {
	t.Helper()
	ctx := context.Background()
	st := embeddedtest.Open(t)
	w := &world{t: t, st: st}
	if _, err := st.CreateTSIGKey(ctx, pools.TSIGKey{Name: "xfr", Algorithm: pools.TSIGHMACSHA256, Secret: secret}); err != nil {
		t.Fatal(err)
	}
	z, err := st.Create(ctx, &pools.Zone{Name: "t.example", Nameservers: []string{"ns1.t.example"}, TTL: 300,
		SOA:      pools.SOA{Refresh: 1, Retry: 1, Expire: 1, Minimum: 1},
		Records:  []pools.Record{{Name: "ns1.t.example", Type: "A", Content: "192.0.2.53"}},
		Transfer: tr})
	if err != nil {
		t.Fatal(err)
	}
	w.zone = z.(*pools.Zone)
	// Health applies to monitored pools only.
	mon := create[pools.Monitor](t, st, `{"type": "tcp", "port": 80}`).ObjectMeta().ID
	p1 := create[pools.Pool](t, st, `{"name": "p1", "monitor": "`+mon+`", "origins": [{"name": "a", "address": "192.0.2.1"}]}`)
	p2 := create[pools.Pool](t, st, `{"name": "p2", "monitor": "`+mon+`", "origins": [{"name": "b", "address": "192.0.2.2"}]}`)
	lb := create[pools.LoadBalancer](t, st, `{"zone": "`+w.zone.ID+`", "name": "www.t.example", "ttl": 30,
		"default_pools": ["`+p1.ObjectMeta().ID+`", "`+p2.ObjectMeta().ID+`"], "fallback_pool": "`+p2.ObjectMeta().ID+`"}`)
	w.lb = lb.ObjectMeta().ID
	w.pools = [2]string{p1.ObjectMeta().ID, p2.ObjectMeta().ID}
	w.svc = transfer.New(transfer.Config{Keys: st, Store: st, NotifyInterval: 50 * time.Millisecond})
	t.Cleanup(w.svc.Close)
	return w
}

// create stores an object given as the API takes it (defaults filled).
func create[T any, P interface {
	*T
	pools.Object
}](t *testing.T, st pools.Store, doc string) pools.Object {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatal(err)
	}
	o, err := st.Create(context.Background(), P(&v))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// observe compiles the store's configuration with the world's health and
// has the service observe it, as a node does on each publication.
func (w *world) observe() *steering.Snapshot {
	w.t.Helper()
	cfg, err := w.st.Config(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	snap, err := steering.Compile(cfg, w.health)
	if err != nil {
		w.t.Fatal(err)
	}
	w.svc.Observe(snap)
	return snap
}

func (w *world) serial() uint32 {
	w.t.Helper()
	o, err := w.st.Get(context.Background(), pools.KindZone, w.zone.ID)
	if err != nil {
		w.t.Fatal(err)
	}
	return o.(*pools.Zone).Serial
}

// ask sends a transfer request from src and returns every message of the
// answer.
func (w *world) ask(m *dns.Msg, src string) []*dns.Msg {
	w.t.Helper()
	raw, err := m.Pack()
	if err != nil {
		w.t.Fatal(err)
	}
	if m.IsTsig() != nil {
		if raw, _, err = dns.TsigGenerate(m, secret, "", false); err != nil {
			w.t.Fatal(err)
		}
	}
	var out []*dns.Msg
	w.svc.ServeTransfer(raw, netip.MustParseAddr(src), func(b []byte) error {
		r := new(dns.Msg)
		if err := r.Unpack(b); err != nil {
			w.t.Fatalf("answer does not parse: %v", err)
		}
		out = append(out, r)
		return nil
	})
	return out
}

func xfr(qt uint16, have uint32, signed bool) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion("t.example.", qt)
	if qt == dns.TypeIXFR {
		m.Ns = []dns.RR{&dns.SOA{Hdr: dns.RR_Header{Name: "t.example.", Rrtype: dns.TypeSOA, Class: dns.ClassINET}, Ns: ".", Mbox: ".", Serial: have}}
	}
	m.SetEdns0(1232, false)
	if signed {
		m.SetTsig("xfr.", dns.HmacSHA256, 300, time.Now().Unix())
	}
	return m
}

func records(ms []*dns.Msg) []string {
	var out []string
	for _, m := range ms {
		for _, rr := range m.Answer {
			out = append(out, strings.Join(strings.Fields(rr.String()), " "))
		}
	}
	return out
}

// TestAccessRules: a transfer needs the source in allow and the key in
// tsig_keys; anything else is REFUSED with nothing of the zone, a wrong
// key NOTAUTH.
func TestAccessRules(t *testing.T) {
	t.Parallel()
	w := newWorld(t, &pools.ZoneTransfer{Allow: []string{"127.0.0.0/8"}, TSIGKeys: []string{"xfr"}})
	w.observe()
	cases := []struct {
		name   string
		m      *dns.Msg
		src    string
		rcode  int
		leaked bool
	}{
		{"granted AXFR", xfr(dns.TypeAXFR, 0, true), "127.0.0.1", dns.RcodeSuccess, true},
		{"unsigned", xfr(dns.TypeAXFR, 0, false), "127.0.0.1", dns.RcodeRefused, false},
		{"unsigned IXFR", xfr(dns.TypeIXFR, 1, false), "127.0.0.1", dns.RcodeRefused, false},
		{"outside allow", xfr(dns.TypeAXFR, 0, true), "192.0.2.99", dns.RcodeRefused, false},
		{"unknown key", func() *dns.Msg {
			m := xfr(dns.TypeAXFR, 0, false)
			m.SetTsig("other.", dns.HmacSHA256, 300, time.Now().Unix())
			return m
		}(), "127.0.0.1", dns.RcodeNotAuth, false},
	}
	for _, c := range cases {
		ms := w.ask(c.m, c.src)
		if len(ms) == 0 {
			t.Errorf("%s: no answer", c.name)
			continue
		}
		if ms[0].Rcode != c.rcode {
			t.Errorf("%s: %s, want %s", c.name, dns.RcodeToString[ms[0].Rcode], dns.RcodeToString[c.rcode])
		}
		if got := len(records(ms)) > 0; got != c.leaked {
			t.Errorf("%s: records %v", c.name, records(ms))
		}
	}
	// A wrong secret under the right name: NOTAUTH (BADSIG).
	m := xfr(dns.TypeAXFR, 0, true)
	raw, _, _ := dns.TsigGenerate(m, "d3Jvbmcgd3Jvbmcgd3Jvbmc=", "", false)
	var got *dns.Msg
	w.svc.ServeTransfer(raw, netip.MustParseAddr("127.0.0.1"), func(b []byte) error {
		got = new(dns.Msg)
		return got.Unpack(b)
	})
	if got == nil || got.Rcode != dns.RcodeNotAuth || len(got.Answer) != 0 {
		t.Errorf("wrong secret: %v", got)
	}
}

// TestAXFRAndIXFR: AXFR is the zone between SOAs with each load balancer
// as its fail-static answer; IXFR from the last serial is only the
// change, from the current serial the SOA alone, and from a serial the
// journal does not know the whole zone.
func TestAXFRAndIXFR(t *testing.T) {
	t.Parallel()
	w := newWorld(t, &pools.ZoneTransfer{Allow: []string{"127.0.0.1/32"}})
	w.observe()
	first := w.serial()
	all := records(w.ask(xfr(dns.TypeAXFR, 0, false), "127.0.0.1"))
	if len(all) != 5 || !strings.Contains(all[0], " SOA ") || !strings.Contains(all[4], " SOA ") ||
		!slices.Contains(all, "www.t.example. 30 IN A 192.0.2.1") {
		t.Errorf("AXFR %q", all)
	}
	z := *w.zone
	z.Records = append(slices.Clone(z.Records), pools.Record{Name: "new.t.example", Type: "TXT", Content: `"new"`})
	if _, err := w.st.Replace(context.Background(), &z, 0); err != nil {
		t.Fatal(err)
	}
	w.observe()
	second := w.serial()
	inc := records(w.ask(xfr(dns.TypeIXFR, first, false), "127.0.0.1"))
	if len(inc) != 5 || inc[3] != `new.t.example. 300 IN TXT "new"` {
		t.Errorf("IXFR from %d: %q", first, inc)
	}
	if cur := records(w.ask(xfr(dns.TypeIXFR, second, false), "127.0.0.1")); len(cur) != 1 {
		t.Errorf("IXFR from the current serial: %q", cur)
	}
	if full := records(w.ask(xfr(dns.TypeIXFR, 12345, false), "127.0.0.1")); len(full) != 6 {
		t.Errorf("IXFR from an unknown serial is not the whole zone: %q", full)
	}
	if sec := w.svc.Secondaries(w.zone.ID); len(sec) != 1 || sec[0].Serial != second || sec[0].Address != "127.0.0.1" {
		t.Errorf("secondaries %+v", sec)
	}
}

// TestHealthChangeGetsASerial: a health change that changes a load
// balancer's fail-static answer makes a new serial, the second within
// min_interval only once it has passed.
func TestHealthChangeGetsASerial(t *testing.T) {
	t.Parallel()
	w := newWorld(t, &pools.ZoneTransfer{Allow: []string{"127.0.0.1/32"}, MinInterval: 2})
	w.observe()
	s0 := w.serial()
	p1 := w.pools[0]
	down := func(healthy bool) {
		w.health = pools.NewHealth(map[pools.OriginKey]pools.OriginHealth{{Pool: p1, Origin: "a"}: {Healthy: healthy}}, nil)
		w.observe()
	}
	down(false)
	waitSerial := func(after uint32, within time.Duration) (uint32, time.Duration) {
		start := time.Now()
		for time.Since(start) < within {
			if s := w.serial(); s != after {
				return s, time.Since(start)
			}
			time.Sleep(10 * time.Millisecond)
		}
		return after, within
	}
	s1, _ := waitSerial(s0, 5*time.Second)
	if s1 == s0 {
		t.Fatal("a health change that changes the answer made no new serial")
	}
	w.observe() // the node sees its own write
	if got := records(w.ask(xfr(dns.TypeAXFR, 0, false), "127.0.0.1")); !slices.Contains(got, "www.t.example. 30 IN A 192.0.2.2") {
		t.Errorf("after the flip, AXFR %q", got)
	}
	start := time.Now()
	down(true)
	s2, _ := waitSerial(s1, 10*time.Second)
	if s2 == s1 {
		t.Fatal("the flip back made no new serial")
	}
	if took := time.Since(start); took < 1500*time.Millisecond {
		t.Errorf("second serial %v after the first: min_interval is 2 s", took)
	}
	// A health change that changes no answer makes no serial.
	w.observe()
	s3 := w.serial()
	w.health = pools.NewHealth(map[pools.OriginKey]pools.OriginHealth{{Pool: w.pools[1], Origin: "b"}: {Healthy: true, Reason: "ok"}}, nil)
	w.observe()
	if s, _ := waitSerial(s3, 3*time.Second); s != s3 {
		t.Errorf("a change of no answer made serial %d", s)
	}
}

// TestNotifyUntilTransferred: NOTIFY goes to the secondary again and
// again until it transfers the serial.
func TestNotifyUntilTransferred(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []uint32
	pc, addr := listenUDP(t)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			m := new(dns.Msg)
			if m.Unpack(buf[:n]) != nil || m.Opcode != dns.OpcodeNotify || len(m.Answer) != 1 {
				continue
			}
			mu.Lock()
			got = append(got, m.Answer[0].(*dns.SOA).Serial)
			mu.Unlock()
			r := new(dns.Msg)
			r.SetReply(m)
			b, _ := r.Pack()
			_, _ = pc.WriteTo(b, from)
		}
	}()
	w := newWorld(t, &pools.ZoneTransfer{Allow: []string{"127.0.0.1/32"}, Notify: []string{addr}})
	w.observe()
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for count() < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if count() < 3 {
		t.Fatalf("%d NOTIFYs before the secondary transferred, want them repeated", count())
	}
	w.ask(xfr(dns.TypeAXFR, 0, false), "127.0.0.1")
	time.Sleep(200 * time.Millisecond) // a NOTIFY in flight may still land
	n := count()
	time.Sleep(500 * time.Millisecond) // ten NOTIFY intervals
	if count() != n {
		t.Errorf("NOTIFY went on after the secondary transferred: %d then %d", n, count())
	}
	mu.Lock()
	defer mu.Unlock()
	if got[0] != w.serial() {
		t.Errorf("NOTIFY carried serial %d, the zone has %d", got[0], w.serial())
	}
}

// listenUDP is a secondary's NOTIFY socket on 127.0.0.1.
func listenUDP(t *testing.T) (net.PacketConn, string) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	return pc, pc.LocalAddr().String()
}
