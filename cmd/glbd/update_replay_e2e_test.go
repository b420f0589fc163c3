package main

import (
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// capturingProxy relays UDP datagrams to server and keeps a copy of every
// UPDATE message a client sends through it, as someone on the path would.
type capturingProxy struct {
	addr string
	mu   sync.Mutex
	seen [][]byte
}

func newCapturingProxy(t *testing.T, server string) *capturingProxy {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	p := &capturingProxy{addr: pc.LocalAddr().String()}
	up, err := net.ResolveUDPAddr("udp", server)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		buf := make([]byte, 65535)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			msg := append([]byte(nil), buf[:n]...)
			if n > 2 && (msg[2]>>3)&0xf == dns.OpcodeUpdate {
				p.mu.Lock()
				p.seen = append(p.seen, msg)
				p.mu.Unlock()
			}
			go func() {
				c, err := net.DialUDP("udp", nil, up)
				if err != nil {
					return
				}
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				if _, err := c.Write(msg); err != nil {
					return
				}
				r := make([]byte, 65535)
				m, err := c.Read(r)
				if err == nil {
					_, _ = pc.WriteTo(r[:m], from)
				}
			}()
		}
	}()
	return p
}

func (p *capturingProxy) captured() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen
}

// resend sends raw to server over UDP as it is and returns the reply.
func resend(t *testing.T, server string, raw []byte) *dns.Msg {
	t.Helper()
	r := new(dns.Msg)
	if err := r.Unpack(exchangeRaw(t, server, raw, false)); err != nil {
		t.Fatalf("reply to a replay: %v", err)
	}
	return r
}

// TestUpdateReplayRefused: an nsupdate message captured on its way to
// glbd and sent again, after the record it added was deleted, is answered
// NOTAUTH with TSIG error BADTIME and changes nothing: the zone in the
// store, the answer and the audit log stay as they were. A fresh update
// with the same key still goes through.
func TestUpdateReplayRefused(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("nsupdate"); err != nil {
		t.Fatal("this test needs nsupdate (Debian/Ubuntu: apt-get install bind9-dnsutils)")
	}
	g := startGlbd(t, "")
	zoneID := configuredZone(t, g)
	secret := acmeKey(t, g, zoneID)
	name := "_acme-challenge.www.glb.example.com"

	proxy := newCapturingProxy(t, g.dns)
	via := &glbd{t: t, dns: proxy.addr}
	if out, err := nsupdate(t, via, "acme", secret, "zone glb.example.com\nupdate add "+name+" 60 TXT \"token-one\""); err != nil {
		t.Fatalf("nsupdate add through the proxy: %v\n%s", err, out)
	}
	caught := proxy.captured()
	if len(caught) != 1 {
		t.Fatalf("the proxy caught %d UPDATE messages, want 1", len(caught))
	}
	if out, err := nsupdate(t, g, "acme", secret, "zone glb.example.com\nupdate delete "+name+" TXT"); err != nil {
		t.Fatalf("nsupdate delete: %v\n%s", err, out)
	}
	if got, status := dig(t, g.dns, name, "TXT"); status != "NXDOMAIN" {
		t.Fatalf("after the delete: %s %v", status, got)
	}

	before, audits := zoneState(t, g, zoneID), len(auditBy(t, g, "tsig:acme"))
	for i := range 2 {
		r := resend(t, g.dns, caught[0])
		ts := r.IsTsig()
		if r.Rcode != dns.RcodeNotAuth || ts == nil || ts.Error != dns.RcodeBadTime {
			t.Fatalf("replay %d: rcode %s, TSIG %v; want NOTAUTH, BADTIME", i+1, dns.RcodeToString[r.Rcode], ts)
		}
	}
	if after := zoneState(t, g, zoneID); after != before {
		t.Fatalf("a replayed update changed the zone:\n%s\n%s", before, after)
	}
	if got, status := dig(t, g.dns, name, "TXT"); status != "NXDOMAIN" {
		t.Fatalf("after the replay: %s %v", status, got)
	}
	if n := len(auditBy(t, g, "tsig:acme")); n != audits {
		t.Fatalf("the replay left %d audit entries, want %d", n, audits)
	}
	if out, err := nsupdate(t, g, "acme", secret, "zone glb.example.com\nupdate add "+name+" 60 TXT \"token-two\""); err != nil || strings.Contains(out, "BADTIME") {
		t.Fatalf("a fresh update after the replay: %v\n%s", err, out)
	}
	if got, _ := dig(t, g.dns, name, "TXT"); len(got) != 1 || got[0] != `"token-two"` {
		t.Fatalf("after a fresh update: %v", got)
	}
}
