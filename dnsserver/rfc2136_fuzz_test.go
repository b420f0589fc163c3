package dnsserver

import (
	"context"
	"log/slog"
	"net/netip"
	"testing"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/pools/embedded/embeddedtest"
)

// FuzzUpdate feeds UPDATE messages to the handler with a real (embedded)
// store behind it: raw, and re-signed with a key granted the whole zone so
// that the fuzzer reaches prerequisites and the update section. Every
// reply must unpack and match the query, and whatever an update stored
// must still compile, so that no UPDATE can stop a zone from being served.
func FuzzUpdate(f *testing.F) {
	seed := func(build func(m *dns.Msg)) {
		m := new(dns.Msg)
		m.SetUpdate("glb.example.com.")
		build(m)
		wire, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(wire, true)
		f.Add(wire, false)
	}
	rr := func(s string) dns.RR {
		r, err := dns.NewRR(s)
		if err != nil {
			f.Fatal(err)
		}
		return r
	}
	seed(func(m *dns.Msg) { m.Insert([]dns.RR{rr(`_acme-challenge.x.glb.example.com 60 IN TXT "token"`)}) })
	seed(func(m *dns.Msg) { m.RemoveRRset([]dns.RR{rr(`txt.glb.example.com 0 IN TXT ""`)}) })
	seed(func(m *dns.Msg) { m.RemoveName([]dns.RR{rr(`mx.glb.example.com 0 IN A 0.0.0.0`)}) })
	seed(func(m *dns.Msg) { m.Remove([]dns.RR{rr(`txt.glb.example.com 0 IN TXT "hello world"`)}) })
	seed(func(m *dns.Msg) {
		m.Used([]dns.RR{rr(`txt.glb.example.com 0 IN TXT "hello world"`)})
		m.NameNotUsed([]dns.RR{rr(`new.glb.example.com 0 IN A 0.0.0.0`)})
		m.Insert([]dns.RR{rr(`new.glb.example.com 60 IN CNAME www.example.net.`), rr(`new.glb.example.com 60 IN A 192.0.2.1`)})
	})
	seed(func(m *dns.Msg) { m.Insert([]dns.RR{rr(`glb.example.com 60 IN NS ns9.example.net.`)}) })

	ctx := context.Background()
	st := embeddedtest.Open(f)
	cfg := testConfig()
	z := cfg.Zones[0]
	z.Revision = 0
	if _, err := st.Create(ctx, &z); err != nil {
		f.Fatal(err)
	}
	secret := pools.NewTSIGSecret(pools.TSIGHMACSHA256)
	grant := pools.TSIGGrant{Zone: "z1", Name: "glb.example.com", Match: pools.MatchSubtree, Types: pools.TSIGUpdateTypes}
	if _, err := st.CreateTSIGKey(ctx, pools.TSIGKey{Name: "fuzz", Algorithm: pools.TSIGHMACSHA256, Grants: []pools.TSIGGrant{grant}, Secret: secret}); err != nil {
		f.Fatal(err)
	}
	s, err := New(Config{Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler), Updates: st})
	if err != nil {
		f.Fatal(err)
	}
	s.Publish(compileTest(f, cfg))
	src := netip.MustParseAddr("127.0.0.1")

	f.Fuzz(func(t *testing.T, msg []byte, sign bool) {
		raw := msg
		if sign {
			m := new(dns.Msg)
			if m.Unpack(msg) != nil {
				return
			}
			m.Opcode, m.Response = dns.OpcodeUpdate, false
			if m.IsTsig() != nil {
				m.Extra = m.Extra[:len(m.Extra)-1]
			}
			m.SetTsig("fuzz.", dns.HmacSHA256, 300, 0)
			var err error
			if raw, _, err = dns.TsigGenerate(m, secret, "", false); err != nil {
				return
			}
		}
		if r, _ := fuzzReply(t, s, raw, src, true); r == nil {
			return
		}
		o, err := st.Get(ctx, pools.KindZone, "z1")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := compileZone(o.(*pools.Zone), nil); err != nil {
			t.Fatalf("an update stored a zone that does not compile: %v\nquery %x", err, raw)
		}
	})
}
