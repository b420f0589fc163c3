package dnsserver

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/pools/embedded/embeddedtest"
)

// updateHarness is a server whose UPDATEs go to a real (embedded) store
// holding zone z, with a key granted every type under the apex.
type updateHarness struct {
	t      *testing.T
	s      *Server
	st     pools.Store
	secret string
}

func newUpdateHarness(t *testing.T, z pools.Zone) *updateHarness {
	t.Helper()
	ctx := context.Background()
	st := embeddedtest.Open(t)
	z.Revision = 0
	if _, err := st.Create(ctx, &z); err != nil {
		t.Fatal(err)
	}
	secret := pools.NewTSIGSecret(pools.TSIGHMACSHA256)
	grant := pools.TSIGGrant{Zone: z.ID, Name: z.Name, Match: pools.MatchSubtree, Types: pools.TSIGUpdateTypes}
	if _, err := st.CreateTSIGKey(ctx, pools.TSIGKey{Name: "k", Algorithm: pools.TSIGHMACSHA256, Grants: []pools.TSIGGrant{grant}, Secret: secret}); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler), Updates: st})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := st.Config(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Publish(compileTest(t, cfg))
	return &updateHarness{t: t, s: s, st: st, secret: secret}
}

// send signs and handles one UPDATE of zone apex built by build and
// returns its rcode.
func (h *updateHarness) send(apex string, build func(m *dns.Msg)) int {
	h.t.Helper()
	m := new(dns.Msg)
	m.SetUpdate(dns.Fqdn(apex))
	build(m)
	m.SetTsig("k.", dns.HmacSHA256, 300, 0)
	raw, _, err := dns.TsigGenerate(m, h.secret, "", false)
	if err != nil {
		h.t.Fatal(err)
	}
	r, _ := fuzzReply(h.t, h.s, raw, netip.MustParseAddr("127.0.0.1"), true)
	return r.Rcode
}

func (h *updateHarness) records(id string) []pools.Record {
	h.t.Helper()
	o, err := h.st.Get(context.Background(), pools.KindZone, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return o.(*pools.Zone).Records
}

// TestUpdateSeesGenericRecords: a record stored in the generic form of
// RFC 3597 with data the DNS library will not parse as its type is part
// of the zone an UPDATE works on: an unrelated update keeps it, a
// prerequisite finds its name in use, and deleting the name's RRsets asks
// for a grant of its type.
func TestUpdateSeesGenericRecords(t *testing.T) {
	z := pools.DefaultZone()
	z.ID, z.Name, z.Nameservers = "z1", "glb.example.com", []string{"ns1.glb.example.com"}
	wallet := pools.Record{Name: "w.glb.example.com", Type: "NINFO", Content: `\# 2 0a0b`}
	z.Records = []pools.Record{{Name: "ns1.glb.example.com", Type: "A", Content: "192.0.2.53"}, wallet}
	h := newUpdateHarness(t, z)
	rr := func(s string) dns.RR {
		r, err := dns.NewRR(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if rc := h.send(z.Name, func(m *dns.Msg) { m.Insert([]dns.RR{rr(`t.glb.example.com 60 IN TXT "x"`)}) }); rc != dns.RcodeSuccess {
		t.Fatalf("unrelated add: %s", dns.RcodeToString[rc])
	}
	if recs := h.records(z.ID); !slices.Contains(recs, wallet) || len(recs) != 3 {
		t.Fatalf("after an unrelated update the zone holds %v", recs)
	}
	rc := h.send(z.Name, func(m *dns.Msg) {
		m.NameNotUsed([]dns.RR{rr(`w.glb.example.com 0 IN A 0.0.0.0`)})
		m.Insert([]dns.RR{rr(`w.glb.example.com 60 IN TXT "y"`)})
	})
	if rc != dns.RcodeYXDomain {
		t.Fatalf("a name holding only a generic record taken for unused: %s, want YXDOMAIN", dns.RcodeToString[rc])
	}
	// NINFO is no type an UPDATE may change: deleting the name's RRsets
	// needs a grant the key cannot have, and leaves the record.
	if rc := h.send(z.Name, func(m *dns.Msg) { m.RemoveName([]dns.RR{rr(`w.glb.example.com 0 IN A 0.0.0.0`)}) }); rc != dns.RcodeRefused {
		t.Fatalf("delete the name holding a generic record: %s, want REFUSED", dns.RcodeToString[rc])
	}
	if recs := h.records(z.ID); !slices.Contains(recs, wallet) || len(recs) != 3 {
		t.Fatalf("a refused deletion left %v", recs)
	}
}

// TestIdleCommitterRemoved: a zone's committer outlives its last batch by
// committerIdle, not for good, and a zone updated again gets a new one.
func TestIdleCommitterRemoved(t *testing.T) {
	z := pools.DefaultZone()
	z.ID, z.Name, z.Nameservers = "z1", "glb.example.com", []string{"ns1.glb.example.com"}
	h := newUpdateHarness(t, z)
	add := func(name string) {
		t.Helper()
		rr, _ := dns.NewRR(name + ` 60 IN TXT "x"`)
		if rc := h.send(z.Name, func(m *dns.Msg) { m.Insert([]dns.RR{rr}) }); rc != dns.RcodeSuccess {
			t.Fatalf("add %s: %s", name, dns.RcodeToString[rc])
		}
	}
	add("a.glb.example.com")
	sweep := func(after time.Duration) int {
		c := &h.s.commits
		c.mu.Lock()
		c.sweep(time.Now().Add(after))
		c.mu.Unlock()
		return c.len()
	}
	// The committer has answered; its goroutine may still be on its way
	// out, so the sweep waits for it to be idle.
	deadline := time.Now().Add(10 * time.Second)
	for sweep(committerIdle/2) != 1 || sweep(committerIdle+time.Second) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d committers kept past their idle time", h.s.commits.len())
		}
		time.Sleep(10 * time.Millisecond)
	}
	add("b.glb.example.com")
	if n := h.s.commits.len(); n != 1 {
		t.Fatalf("%d committers after another update, want 1", n)
	}
	if recs := h.records(z.ID); len(recs) != 2 {
		t.Fatalf("zone holds %v", recs)
	}
}

// countingKeys is a store that counts its TSIG key look-ups.
type countingKeys struct {
	pools.Store
	n atomic.Int64
}

func (c *countingKeys) TSIGKey(ctx context.Context, name string) (pools.TSIGKey, error) {
	c.n.Add(1)
	return c.Store.TSIGKey(ctx, name)
}

// TestTSIGKeyOncePerRevision: signed messages find their key in the store
// once per published revision, not once each; a key deleted is refused
// (BADKEY) once a snapshot of the revision that deleted it is published.
func TestTSIGKeyOncePerRevision(t *testing.T) {
	z := pools.DefaultZone()
	z.ID, z.Name, z.Nameservers = "z1", "glb.example.com", []string{"ns1.glb.example.com"}
	h := newUpdateHarness(t, z)
	counted := &countingKeys{Store: h.st}
	h.s.cfg.Updates = counted
	for i := range 5 {
		rr, _ := dns.NewRR(fmt.Sprintf(`t%d.glb.example.com 60 IN TXT "x"`, i))
		if rc := h.send(z.Name, func(m *dns.Msg) { m.Insert([]dns.RR{rr}) }); rc != dns.RcodeSuccess {
			t.Fatalf("update %d: %s", i, dns.RcodeToString[rc])
		}
	}
	if n := counted.n.Load(); n != 1 {
		t.Fatalf("%d key look-ups for 5 signed updates at one revision, want 1", n)
	}
	ctx := context.Background()
	if err := h.st.DeleteTSIGKey(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	cfg, err := h.st.Config(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h.s.Publish(compileTest(t, cfg))
	rr, _ := dns.NewRR(`late.glb.example.com 60 IN TXT "x"`)
	if rc := h.send(z.Name, func(m *dns.Msg) { m.Insert([]dns.RR{rr}) }); rc != dns.RcodeNotAuth {
		t.Fatalf("an update signed with a deleted key: %s, want NOTAUTH (BADKEY)", dns.RcodeToString[rc])
	}
	if n := counted.n.Load(); n != 2 {
		t.Fatalf("%d key look-ups after a new revision, want 2", n)
	}
}
