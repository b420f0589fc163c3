package dnsserver

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
)

// FuzzHandlePacket feeds arbitrary bytes to the packet path and checks
// that every reply unpacks, answers the query's id, never carries RA, and
// fits the UDP payload limit.
// fuzzReply is s's reply to the raw query msg from src, unpacked and
// packed, or nil when s drops it. A reply that does not unpack, or is not
// a response with msg's ID, fails the test.
func fuzzReply(t *testing.T, s *Server, msg []byte, src netip.Addr, tcp bool) (*dns.Msg, []byte) {
	t.Helper()
	out := s.handle(msg, src, tcp, nil)
	if out == nil {
		return nil, nil
	}
	r := new(dns.Msg)
	if err := r.Unpack(out); err != nil {
		t.Fatalf("reply does not unpack: %v\nquery %x\nreply %x", err, msg, out)
	}
	if r.Id != binary.BigEndian.Uint16(msg) || !r.Response {
		t.Fatalf("header %v", r.MsgHdr)
	}
	return r, out
}

func FuzzHandlePacket(f *testing.F) {
	for _, c := range cases {
		wire, err := c.msg().Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(wire, c.tcp)
	}
	f.Add(rawQuery(f, 1, ecsOption(1, 24, 0, 198, 51, 100, 1)), false)
	f.Add(rawQuery(f, 2, ecsOption(2, 56, 0, 0x20, 1, 0xd, 0xb8, 0, 0, 0)), false)
	f.Add(rawQuery(f, 3, []byte{0, 8, 0, 7, 0, 1, 24, 0, 198, 51, 100}), false)
	s := newTestServer(f, prometheus.NewRegistry())
	src := netip.MustParseAddr("198.51.100.7")
	f.Fuzz(func(t *testing.T, msg []byte, tcp bool) {
		r, out := fuzzReply(t, s, msg, src, tcp)
		if r == nil {
			return
		}
		if r.RecursionAvailable {
			t.Fatalf("header %v", r.MsgHdr)
		}
		if !tcp && len(out) > maxUDPPayload {
			t.Fatalf("UDP reply of %d bytes", len(out))
		}
		if r.Truncated && len(r.Answer)+len(r.Ns) > 0 {
			t.Fatalf("truncated reply with records")
		}
	})
}
