//go:build linux

package xdp

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"
	"time"
)

// csum is the Internet checksum written the plain way, two bytes at a
// time, to check the eight-at-a-time one against.
func csum(parts ...[]byte) uint16 {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	if len(b)%2 == 1 {
		b = append(b, 0)
	}
	var s uint32
	for i := 0; i < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}

var (
	clientMAC = []byte{2, 0, 0, 0, 0, 2}
	serverMAC = []byte{2, 0, 0, 0, 0, 1}
	client4   = netip.MustParseAddr("198.18.0.2")
	server4   = netip.MustParseAddr("198.18.0.1")
	client6   = netip.MustParseAddr("2001:2::2")
	server6   = netip.MustParseAddr("2001:2::1")
)

// frame builds a query frame from src:5300 to dst:53, checksums right.
func frame(src, dst netip.Addr, payload []byte) []byte {
	f := append(append([]byte{}, serverMAC...), clientMAC...)
	udp := make([]byte, udpLen, udpLen+len(payload))
	binary.BigEndian.PutUint16(udp[0:], 5300)
	binary.BigEndian.PutUint16(udp[2:], 53)
	binary.BigEndian.PutUint16(udp[4:], uint16(udpLen+len(payload)))
	udp = append(udp, payload...)
	var pseudo []byte
	if src.Is4() {
		f = binary.BigEndian.AppendUint16(f, 0x0800)
		ip := make([]byte, ip4Len)
		ip[0], ip[8], ip[9] = 0x45, 64, 17
		binary.BigEndian.PutUint16(ip[2:], uint16(ip4Len+len(udp)))
		copy(ip[12:], src.AsSlice())
		copy(ip[16:], dst.AsSlice())
		binary.BigEndian.PutUint16(ip[10:], csum(ip))
		f = append(f, ip...)
		pseudo = append(append(src.AsSlice(), dst.AsSlice()...), 0, 17, udp[4], udp[5])
	} else {
		f = binary.BigEndian.AppendUint16(f, 0x86dd)
		ip := make([]byte, ip6Len)
		ip[0], ip[6], ip[7] = 0x60, 17, 64
		binary.BigEndian.PutUint16(ip[4:], uint16(len(udp)))
		copy(ip[8:], src.AsSlice())
		copy(ip[24:], dst.AsSlice())
		f = append(f, ip...)
		pseudo = append(append(src.AsSlice(), dst.AsSlice()...), 0, 0, udp[4], udp[5], 0, 0, 0, 17)
	}
	binary.BigEndian.PutUint16(udp[6:], csum(pseudo, udp))
	return append(f, udp...)
}

// TestReplyFrame: a parsed query frame turned into its reply has the
// addresses, ports and MACs swapped, the lengths of the new payload and
// checksums that verify, for odd and even payload lengths.
func TestReplyFrame(t *testing.T) {
	for _, fam := range []struct{ client, server netip.Addr }{{client4, server4}, {client6, server6}} {
		for _, n := range []int{12, 13, 511, 1232} {
			f := frame(fam.client, fam.server, bytes.Repeat([]byte{0xab}, 29))
			room := make([]byte, frameSize-256)
			copy(room, f)
			var p packet
			if v := parse(room[:len(f)], &p); v != answered {
				t.Fatalf("%s: parse: %s", fam.client, verdictNames[v])
			}
			if p.src != fam.client || p.dst != fam.server || p.length != 29 {
				t.Fatalf("parsed %+v", p)
			}
			payload := make([]byte, n)
			for i := range payload {
				payload[i] = byte(i*7 + 1)
			}
			copy(room[p.payload:], payload)
			r := room[:reply(room, &p, n)]
			if !bytes.Equal(r[0:6], clientMAC) || !bytes.Equal(r[6:12], serverMAC) {
				t.Errorf("MACs %x %x not swapped", r[0:6], r[6:12])
			}
			// The reply parses as a query from the server would.
			var rp packet
			if v := parse(r, &rp); v != answered {
				t.Fatalf("%s n=%d: reply parses as %s", fam.client, n, verdictNames[v])
			}
			if rp.src != fam.server || rp.dst != fam.client || rp.length != n || !bytes.Equal(r[rp.payload:], payload) {
				t.Errorf("reply %+v", rp)
			}
			udp := r[rp.payload-udpLen:]
			if binary.BigEndian.Uint16(udp[0:]) != 53 || binary.BigEndian.Uint16(udp[2:]) != 5300 {
				t.Errorf("ports %d -> %d", binary.BigEndian.Uint16(udp[0:]), binary.BigEndian.Uint16(udp[2:]))
			}
			var pseudo []byte
			if fam.client.Is4() {
				ip := r[ethLen : ethLen+ip4Len]
				if csum(ip) != 0 || int(binary.BigEndian.Uint16(ip[2:])) != ip4Len+udpLen+n || ip[6] != 0x40 {
					t.Errorf("IPv4 header %x", ip)
				}
				pseudo = append(append(fam.server.AsSlice(), fam.client.AsSlice()...), 0, 17, udp[4], udp[5])
			} else {
				pseudo = append(append(fam.server.AsSlice(), fam.client.AsSlice()...), 0, 0, udp[4], udp[5], 0, 0, 0, 17)
			}
			if c := csum(pseudo, udp); c != 0 {
				t.Errorf("%s n=%d: UDP checksum does not verify (%#x)", fam.client, n, c)
			}
		}
	}
}

// TestParseRefuses: what the program should never hand over, and what
// arrived damaged, is not answered.
func TestParseRefuses(t *testing.T) {
	q := []byte("0123456789abcdef")
	cases := []struct {
		name string
		f    []byte
		want verdict
	}{
		{"IPv4 header checksum", mutate(frame(client4, server4, q), ethLen+10, 0x55), badSum},
		{"IPv4 UDP checksum", mutate(frame(client4, server4, q), len(frame(client4, server4, q))-1, 0x01), badSum},
		{"IPv6 UDP checksum", mutate(frame(client6, server6, q), len(frame(client6, server6, q))-1, 0x01), badSum},
		{"IPv6 without UDP checksum", zeroSum6(frame(client6, server6, q)), badSum},
		{"IPv4 options", mutate(frame(client4, server4, q), ethLen, 0x46^0x45), malformed},
		{"IPv4 more fragments", mutate(frame(client4, server4, q), ethLen+6, 0x20), malformed},
		{"IPv4 later fragment", mutate(frame(client4, server4, q), ethLen+7, 0x01), malformed},
		{"IPv6 extension header", mutate(frame(client6, server6, q), ethLen+6, 17^44), malformed},
		{"frame shorter than its IP length", frame(client4, server4, q)[:ethLen+ip4Len+udpLen+3], malformed},
		{"UDP length beyond IP length", mutate(frame(client4, server4, q), ethLen+ip4Len+5, 1), malformed},
		{"ARP", mutate(frame(client4, server4, q), 13, 0x06), malformed},
		{"runt", []byte{1, 2, 3}, malformed},
	}
	for _, c := range cases {
		var p packet
		if got := parse(c.f, &p); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, verdictNames[got], verdictNames[c.want])
		}
	}
	// Ethernet pads short frames: the IP length, not the frame's, counts.
	padded := append(frame(client4, server4, q[:12]), make([]byte, 20)...)
	var p packet
	if v := parse(padded, &p); v != answered || p.length != 12 {
		t.Errorf("padded frame: %s, payload %d", verdictNames[v], p.length)
	}
	// IPv4 without a UDP checksum (0) is accepted, as the kernel does.
	f := frame(client4, server4, q)
	f[ethLen+ip4Len+6], f[ethLen+ip4Len+7] = 0, 0
	if v := parse(f, &p); v != answered {
		t.Errorf("IPv4 without UDP checksum: %s", verdictNames[v])
	}
}

func mutate(f []byte, i int, x byte) []byte {
	f[i] ^= x
	return f
}

// zeroSum6 moves an IPv6 frame's UDP checksum into the last payload
// word (an even-length payload), so that the field is 0 while the sum
// still verifies: only the rule that IPv6 needs a checksum refuses it.
func zeroSum6(f []byte) []byte {
	c := uint32(binary.BigEndian.Uint16(f[ethLen+ip6Len+6:]))
	f[ethLen+ip6Len+6], f[ethLen+ip6Len+7] = 0, 0
	w := uint32(binary.BigEndian.Uint16(f[len(f)-2:])) + c
	w = w&0xffff + w>>16
	binary.BigEndian.PutUint16(f[len(f)-2:], uint16(w))
	return f
}

// echo is a Responder that answers with the query, flags flipped.
type echo struct{}

func (echo) Respond(q []byte, _ netip.Addr, _ time.Time, out []byte) []byte {
	out = append(out[:0], q...)
	out[2] |= 0x80
	return out
}

// TestAnswerAllocatesNothing: taking a frame apart, answering and
// writing the reply frame allocate nothing (the handler's own share is
// dnsserver's TestResponderAllocatesNothing).
func TestAnswerAllocatesNothing(t *testing.T) {
	q := &queue{
		targets: []target{{addr: netip.IPv6Unspecified(), any4: true, any6: true, mapped: true}},
		resps:   []Responder{echo{}},
		out:     make([]byte, 0, 65535),
	}
	f4 := frame(client4, server4, bytes.Repeat([]byte{1}, 40))
	f6 := frame(client6, server6, bytes.Repeat([]byte{1}, 40))
	room := make([]byte, frameSize)
	now := time.Now()
	allocs := testing.AllocsPerRun(1000, func() {
		for _, f := range [][]byte{f4, f6} {
			copy(room, f)
			if v, _ := q.answer(room, len(f), now); v != answered {
				t.Fatalf("verdict %s", verdictNames[v])
			}
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per frame pair, want 0", allocs)
	}
}

func BenchmarkAnswerFrame(b *testing.B) {
	q := &queue{
		targets: []target{{addr: server4}},
		resps:   []Responder{echo{}},
		out:     make([]byte, 0, 65535),
	}
	f := frame(client4, server4, bytes.Repeat([]byte{1}, 40))
	room := make([]byte, frameSize)
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		copy(room, f)
		q.answer(room, len(f), now)
	}
}

// FuzzParse: no frame makes parse or reply panic.
func FuzzParse(f *testing.F) {
	f.Add(frame(client4, server4, []byte("0123456789ab")))
	f.Add(frame(client6, server6, []byte("0123456789ab")))
	f.Fuzz(func(t *testing.T, b []byte) {
		room := make([]byte, frameSize)
		copy(room, b)
		var p packet
		if len(b) <= len(room) && parse(room[:len(b)], &p) == answered {
			reply(room, &p, p.length)
		}
	})
}
