package xdp

import (
	"encoding/binary"
	"net/netip"
)

// Header sizes of the frames this path answers: Ethernet without a VLAN
// tag, IPv4 without options, IPv6 without extension headers (the XDP
// program leaves the others to the kernel).
const (
	ethLen  = 14
	ip4Len  = 20
	ip6Len  = 40
	udpLen  = 8
	maxHead = ethLen + ip6Len + udpLen
)

// verdict is what became of one frame.
type verdict int

const (
	answered  verdict = iota
	noReply           // the handler sends nothing (RRL drop, a response, junk)
	malformed         // headers the program should not have redirected
	badSum            // a wrong IPv4 header or UDP checksum: the kernel drops these too
	tooBig            // the reply does not fit the frame
	txFull            // no room in the TX ring
	verdicts
)

var verdictNames = [verdicts]string{"answered", "no_reply", "dropped_malformed", "dropped_checksum", "dropped_too_big", "dropped_tx_full"}

// packet is what parse learns of a frame.
type packet struct {
	v6      bool
	payload int // offset of the UDP payload
	length  int // of the UDP payload
	src     netip.Addr
	dst     netip.Addr
}

// parse checks the headers of the Ethernet frame f, including the
// checksums, and fills p. It does not trust the program: every length is
// checked again.
func parse(f []byte, p *packet) verdict {
	if len(f) < ethLen+ip4Len+udpLen {
		return malformed
	}
	var udp int
	switch binary.BigEndian.Uint16(f[12:]) {
	case 0x0800:
		ip := f[ethLen:]
		if ip[0] != 0x45 || ip[9] != 17 || binary.BigEndian.Uint16(ip[6:])&0x3fff != 0 {
			return malformed
		}
		total := int(binary.BigEndian.Uint16(ip[2:]))
		if total < ip4Len+udpLen || ethLen+total > len(f) {
			return malformed
		}
		if fold(sum(0, ip[:ip4Len])) != 0xffff {
			return badSum
		}
		udp = ethLen + ip4Len
		n := int(binary.BigEndian.Uint16(f[udp+4:]))
		if n != total-ip4Len {
			return malformed
		}
		// A zero UDP checksum over IPv4 means none was computed.
		if binary.BigEndian.Uint16(f[udp+6:]) != 0 {
			s := sum(0, ip[12:20]) + 17 + uint64(n)
			if fold(sum(s, f[udp:udp+n])) != 0xffff {
				return badSum
			}
		}
		p.v6 = false
		p.src = netip.AddrFrom4([4]byte(ip[12:16]))
		p.dst = netip.AddrFrom4([4]byte(ip[16:20]))
		p.payload, p.length = udp+udpLen, n-udpLen
	case 0x86dd:
		if len(f) < ethLen+ip6Len+udpLen {
			return malformed
		}
		ip := f[ethLen:]
		if ip[0]>>4 != 6 || ip[6] != 17 {
			return malformed
		}
		udp = ethLen + ip6Len
		plen := int(binary.BigEndian.Uint16(ip[4:]))
		n := int(binary.BigEndian.Uint16(f[udp+4:]))
		if n < udpLen || n != plen || udp+n > len(f) {
			return malformed
		}
		// IPv6 has no header checksum, so the UDP one is mandatory.
		s := sum(0, ip[8:40]) + 17 + uint64(n)
		if binary.BigEndian.Uint16(f[udp+6:]) == 0 || fold(sum(s, f[udp:udp+n])) != 0xffff {
			return badSum
		}
		p.v6 = true
		p.src = netip.AddrFrom16([16]byte(ip[8:24]))
		p.dst = netip.AddrFrom16([16]byte(ip[24:40]))
		p.payload, p.length = udp+udpLen, n-udpLen
	default:
		return malformed
	}
	return answered
}

// reply turns the headers of the query frame f, parsed into p, into
// those of its reply, whose payload of n bytes is already in place at
// p.payload: addresses and ports swapped, lengths and checksums new. It
// returns the frame's length.
func reply(f []byte, p *packet, n int) int {
	var mac [6]byte
	copy(mac[:], f[0:6])
	copy(f[0:6], f[6:12])
	copy(f[6:12], mac[:])
	udp := p.payload - udpLen
	u := f[udp:]
	sport := binary.BigEndian.Uint16(u[0:])
	binary.BigEndian.PutUint16(u[0:], binary.BigEndian.Uint16(u[2:]))
	binary.BigEndian.PutUint16(u[2:], sport)
	ulen := udpLen + n
	binary.BigEndian.PutUint16(u[4:], uint16(ulen))
	u[6], u[7] = 0, 0
	ip := f[ethLen:]
	var s uint64
	if p.v6 {
		var a [16]byte
		copy(a[:], ip[8:24])
		copy(ip[8:24], ip[24:40])
		copy(ip[24:40], a[:])
		// Version 6, traffic class and flow label 0, as the kernel's
		// UDP sockets send by default.
		binary.BigEndian.PutUint32(ip[0:], 6<<28)
		binary.BigEndian.PutUint16(ip[4:], uint16(ulen))
		ip[7] = 64
		s = sum(0, ip[8:40])
	} else {
		var a [4]byte
		copy(a[:], ip[12:16])
		copy(ip[12:16], ip[16:20])
		copy(ip[16:20], a[:])
		ip[1] = 0
		binary.BigEndian.PutUint16(ip[2:], uint16(ip4Len+ulen))
		// ID 0 and don't fragment, as a kernel socket sends a datagram
		// that fits the path MTU.
		binary.BigEndian.PutUint32(ip[4:], 0x4000)
		ip[8] = 64
		ip[10], ip[11] = 0, 0
		c := ^fold(sum(0, ip[:ip4Len]))
		binary.BigEndian.PutUint16(ip[10:], c)
		s = sum(0, ip[12:20])
	}
	s += 17 + uint64(ulen)
	c := ^fold(sum(s, f[udp:udp+ulen]))
	if c == 0 {
		c = 0xffff // 0 would mean no checksum
	}
	binary.BigEndian.PutUint16(u[6:], c)
	return udp + ulen
}

// sum adds b to the ones' complement sum s as big-endian 16-bit words,
// eight bytes at a time; fold reduces it to 16 bits.
func sum(s uint64, b []byte) uint64 {
	for len(b) >= 8 {
		v := binary.BigEndian.Uint64(b)
		s += v >> 32
		s += v & 0xffffffff
		b = b[8:]
	}
	for len(b) >= 2 {
		s += uint64(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		s += uint64(b[0]) << 8
	}
	return s
}

func fold(s uint64) uint16 {
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return uint16(s)
}
