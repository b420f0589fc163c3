package main

import (
	"bytes"
	"context"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/miekg/dns"
)

// capturingProxy relays UDP datagrams to server and keeps a copy of every
// UPDATE message a client sends through it, and of the answers, as
// someone on the path would.
type capturingProxy struct {
	addr    string
	mu      sync.Mutex
	seen    [][]byte
	answers [][]byte
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
			update := n > 2 && (msg[2]>>3)&0xf == dns.OpcodeUpdate
			if update {
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
					if update {
						p.mu.Lock()
						p.answers = append(p.answers, append([]byte(nil), r[:m]...))
						p.mu.Unlock()
					}
					_, _ = pc.WriteTo(r[:m], from)
				}
			}()
		}
	}()
	return p
}

func (p *capturingProxy) captured() (msgs, answers [][]byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen, p.answers
}

// resend sends raw to server over UDP as it is and returns the reply.
func resend(t *testing.T, server string, raw []byte) []byte {
	t.Helper()
	return exchangeRaw(t, server, raw, false)
}

// TestUpdateReplayChangesNothing: an nsupdate message captured on its way
// to glbd and sent again within its fudge window, after the record it
// added was deleted, is answered with the very answer the first copy got
// (a retransmission is told what became of its update, RFC 8945 §5.2.3
// aside) and changes nothing: the zone in the store, the answer and the
// audit log stay as they were. A fresh update with the same key still
// goes through.
func TestUpdateReplayChangesNothing(t *testing.T) {
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
	caught, answers := proxy.captured()
	if len(caught) != 1 || len(answers) != 1 {
		t.Fatalf("the proxy caught %d UPDATE messages and %d answers, want 1 and 1", len(caught), len(answers))
	}
	if out, err := nsupdate(t, g, "acme", secret, "zone glb.example.com\nupdate delete "+name+" TXT"); err != nil {
		t.Fatalf("nsupdate delete: %v\n%s", err, out)
	}
	if got, status := dig(t, g.dns, name, "TXT"); status != "NXDOMAIN" {
		t.Fatalf("after the delete: %s %v", status, got)
	}

	before, audits := zoneState(t, g, zoneID), len(auditBy(t, g, "tsig:acme"))
	for i := range 2 {
		if got := resend(t, g.dns, caught[0]); !bytes.Equal(got, answers[0]) {
			r, first := new(dns.Msg), new(dns.Msg)
			_ = r.Unpack(got)
			_ = first.Unpack(answers[0])
			t.Fatalf("replay %d answered\n%v\nnot as the first copy was\n%v", i+1, r, first)
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

// TestUpdateRetransmissionWhileApplying: nsupdate resends a UDP UPDATE
// after 3 s without an answer. With the zone's row locked in PostgreSQL
// until the resent copy has been sent, the first copy's write waits and
// the resent copy arrives while it does: the resent copy is answered as the first is, once it
// is, so nsupdate exits 0 without BADTIME, and the update is applied and
// audited once.
func TestUpdateRetransmissionWhileApplying(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("nsupdate"); err != nil {
		t.Fatal("this test needs nsupdate (Debian/Ubuntu: apt-get install bind9-dnsutils)")
	}
	url := freshDatabase(t)
	g := startGlbd(t, "", "--database-url", url)
	zoneID := configuredZone(t, g)
	secret := acmeKey(t, g, zoneID)
	name := "_acme-challenge.www.glb.example.com"

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "select 1 from zones where id = $1 for update", zoneID); err != nil {
		t.Fatal(err)
	}
	proxy := newCapturingProxy(t, g.dns)
	via := &glbd{t: t, dns: proxy.addr}
	released := make(chan error, 1)
	go func() {
		// The lock goes once the resent copy has passed the proxy.
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if caught, _ := proxy.captured(); len(caught) >= 2 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		released <- tx.Rollback(ctx)
	}()
	host, port := splitHostPort(t, via.dns)
	cmd := exec.Command("nsupdate", "-y", "hmac-sha256:acme:"+secret, "-t", "30")
	cmd.Stdin = strings.NewReader("server " + host + " " + port + "\nzone glb.example.com\nupdate add " + name + " 60 TXT \"token-one\"\nsend\n")
	outb, err := cmd.CombinedOutput()
	out := string(outb)
	if rerr := <-released; rerr != nil {
		t.Fatal(rerr)
	}
	caught, _ := proxy.captured()
	t.Logf("nsupdate sent %d copies", len(caught))
	if len(caught) < 2 {
		t.Fatalf("nsupdate sent %d copies; the test needs it to resend", len(caught))
	}
	if err != nil || strings.Contains(out, "BADTIME") || strings.Contains(out, "failed") {
		t.Fatalf("nsupdate with a resent copy: %v\n%s", err, out)
	}
	eventually(t, 5*time.Second, "the update served", func() (bool, string) {
		got, status := dig(t, g.dns, name, "TXT")
		return status == "NOERROR" && len(got) == 1, status
	})
	if es := auditBy(t, g, "tsig:acme"); len(es) != 1 {
		t.Fatalf("%d audit entries for one update sent twice", len(es))
	}
}
