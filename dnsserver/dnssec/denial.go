package dnssec

import (
	"encoding/binary"

	"github.com/miekg/dns"
)

// Compact denial of existence (RFC 9824): a negative answer carries one
// NSEC at the query name whose next name is its immediate successor
// (\000.name), so it proves nothing about any other name and needs no
// zone walk, pre-computed chain or NSEC3. The type bitmap lists the types
// at the name (NODATA), or only NXNAME, RRSIG and NSEC for a name that
// does not exist, whose response then carries NOERROR (RFC 9824 §3).

// NXDomainTypes is the bitmap of a name that does not exist.
var NXDomainTypes = []uint16{dns.TypeRRSIG, dns.TypeNSEC, dns.TypeNXNAME}

// AppendNSEC appends the tail (type, class, TTL, rdlength, rdata) of the
// compact-denial NSEC record at owner (lower-case wire name) to dst:
// next name \000.owner, types (ascending) without skip. It allocates
// nothing when dst has room, and reports false when the successor name
// would exceed 255 bytes.
func AppendNSEC(dst, owner []byte, ttl uint32, types []uint16, skip uint16) ([]byte, bool) {
	if len(owner)+2 > 255 {
		return dst, false
	}
	var h [10]byte
	binary.BigEndian.PutUint16(h[0:], dns.TypeNSEC)
	binary.BigEndian.PutUint16(h[2:], dns.ClassINET)
	binary.BigEndian.PutUint32(h[4:], ttl)
	start := len(dst)
	dst = append(dst, h[:]...)
	dst = append(dst, 1, 0)
	dst = append(dst, owner...)
	dst = appendBitmap(dst, types, skip)
	binary.BigEndian.PutUint16(dst[start+8:], uint16(len(dst)-start-10))
	return dst, true
}

// appendBitmap writes the NSEC type bitmap (RFC 4034 §4.1.2): one block
// per window in use, each as long as its last non-zero octet.
func appendBitmap(dst []byte, types []uint16, skip uint16) []byte {
	for i := 0; i < len(types); {
		win := types[i] >> 8
		var bits [32]byte
		n := 0
		for ; i < len(types) && types[i]>>8 == win; i++ {
			t := types[i]
			if t == skip {
				continue
			}
			lo := t & 0xff
			bits[lo/8] |= 0x80 >> (lo % 8)
			n = max(n, int(lo/8)+1)
		}
		if n > 0 {
			dst = append(dst, byte(win), byte(n))
			dst = append(dst, bits[:n]...)
		}
	}
	return dst
}
