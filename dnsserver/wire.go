package dnsserver

import (
	"encoding/binary"
	"net/netip"
)

// The query is parsed straight from the wire rather than through
// dns.Msg.Unpack: miekg's parser allocates every RR and is lenient where
// RFC 7871 asks for FORMERR (it cannot tell an ECS address of the wrong
// length, and a bad family fails the whole message, so the FORMERR would
// lose its OPT). Reading the few fields an authoritative server needs
// costs no allocation and leaves every decision to this package.

const (
	headerLen = 12

	flagQR = 1 << 15
	flagAA = 1 << 10
	flagTC = 1 << 9
	flagRD = 1 << 8
	flagCD = 1 << 4

	typeA     = 1
	typeNS    = 2
	typeCNAME = 5
	typeSOA   = 6
	typeHINFO = 13
	typeMX    = 15
	typeTXT   = 16
	typeAAAA  = 28
	typeDS    = 43
	typeOPT   = 41
	typeTSIG  = 250
	typeIXFR  = 251
	typeAXFR  = 252
	typeANY   = 255
	typeCAA   = 257

	classIN = 1

	rcodeNoError  = 0
	rcodeFormErr  = 1
	rcodeServFail = 2
	rcodeNXDomain = 3
	rcodeNotImp   = 4
	rcodeRefused  = 5
	rcodeBadVers  = 16

	optionNSID   = 3
	optionECS    = 8
	optionCookie = 10

	classCH = 3

	// maxUDPPayload is the largest UDP reply (DNS flag day 2020): it avoids
	// IP fragmentation on every common path.
	maxUDPPayload = 1232
	minUDPPayload = 512
)

// request is one parsed query. It lives on the stack of the handler.
type request struct {
	id     uint16
	flags  uint16 // the query's header flags word
	opcode uint8
	qd     uint16

	// question, when qd == 1 and it parsed
	hasQuestion bool
	question    []byte // name, type and class as sent (letter case kept)
	qtype       uint16
	qclass      uint16
	lname       [255]byte // the name lower-cased, wire form
	lnameLen    int
	labelOffs   [128]uint8 // offset in lname of each label
	nlabels     int

	malformed bool // structure broken: FORMERR

	opt      bool // an OPT record was seen
	optErr   bool // FORMERR caused by the OPT record
	udpSize  uint16
	version  uint8
	do       bool
	ecs      bool
	ecsErr   bool
	ecsFam   uint16
	ecsSrc   uint8
	ecsAddr  [16]byte
	ecsBytes int // address bytes as sent: ceil(ecsSrc/8)

	// tsig: the additional section ends in a TSIG record (RFC 8945): the
	// query is answered, signed, off the answer path (tsig_query.go).
	tsig bool

	nsid bool // the client asked for the NSID (RFC 5001)
	// DNS cookie (RFC 7873): a client cookie, and the server cookie it
	// sent back, if any. cookieErr: a malformed option (FORMERR).
	cookie       bool
	cookieErr    bool
	clientCookie [8]byte
	serverCookie [32]byte
	serverLen    int
}

func (r *request) name() []byte { return r.lname[:r.lnameLen] }

// ecsPrefix is the client subnet of a valid ECS option, invalid when the
// query has none. A source prefix of 0 is returned as it came: whether it
// counts is steering.FillRequest's to say.
func (r *request) ecsPrefix() netip.Prefix {
	if !r.ecs {
		return netip.Prefix{}
	}
	switch r.ecsFam {
	case 1:
		return netip.PrefixFrom(netip.AddrFrom4([4]byte(r.ecsAddr[:4])), int(r.ecsSrc))
	case 2:
		return netip.PrefixFrom(netip.AddrFrom16(r.ecsAddr), int(r.ecsSrc))
	}
	return netip.Prefix{}
}

// parse reads msg into r. It reports false when the message must be dropped
// without a reply (too short for a header, or a response: answering those
// would let anyone bounce traffic between servers).
func (r *request) parse(msg []byte) bool {
	if len(msg) < headerLen {
		return false
	}
	r.id = binary.BigEndian.Uint16(msg)
	r.flags = binary.BigEndian.Uint16(msg[2:])
	if r.flags&flagQR != 0 {
		return false
	}
	r.opcode = uint8(r.flags>>11) & 0xf
	r.qd = binary.BigEndian.Uint16(msg[4:])
	an := int(binary.BigEndian.Uint16(msg[6:]))
	ns := int(binary.BigEndian.Uint16(msg[8:]))
	ar := int(binary.BigEndian.Uint16(msg[10:]))
	if r.opcode != 0 {
		return true // NOTIMP; nothing else is read
	}
	off := headerLen
	for i := 0; i < int(r.qd); i++ {
		start := off
		var ok bool
		if i == 0 {
			off, ok = r.parseQName(msg, off)
		} else {
			off, ok = skipName(msg, off)
		}
		if !ok || off+4 > len(msg) {
			r.malformed = true
			return true
		}
		if i == 0 {
			r.qtype = binary.BigEndian.Uint16(msg[off:])
			r.qclass = binary.BigEndian.Uint16(msg[off+2:])
			r.question = msg[start : off+4]
			r.hasQuestion = true
		}
		off += 4
	}
	for i := 0; i < an+ns; i++ {
		var ok bool
		if off, _, _, ok = skipRR(msg, off); !ok {
			r.malformed = true
			return true
		}
	}
	for i := 0; i < ar; i++ {
		start := off
		var ok bool
		var typ uint16
		var rdata []byte
		if off, typ, rdata, ok = skipRR(msg, off); !ok {
			r.malformed = true
			return true
		}
		switch typ {
		case typeOPT:
			r.parseOPT(msg[start:off], rdata)
		case typeTSIG:
			// RFC 8945 §5.1: a TSIG anywhere but last is FORMERR.
			r.tsig = true
			if i != ar-1 {
				r.malformed = true
				return true
			}
		}
	}
	return true
}

// parseQName reads the question name: uncompressed labels only (there is
// nothing before it to point at), at most 255 bytes.
func (r *request) parseQName(msg []byte, off int) (int, bool) {
	n := 0
	for {
		if off >= len(msg) {
			return 0, false
		}
		l := int(msg[off])
		if l == 0 {
			if n >= len(r.lname) {
				return 0, false
			}
			r.lname[n] = 0
			r.lnameLen = n + 1
			return off + 1, true
		}
		if l > 63 || off+1+l > len(msg) || n+1+l+1 > len(r.lname) || r.nlabels >= len(r.labelOffs) {
			return 0, false
		}
		r.labelOffs[r.nlabels] = uint8(n)
		r.nlabels++
		r.lname[n] = byte(l)
		for j := 0; j < l; j++ {
			c := msg[off+1+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			r.lname[n+1+j] = c
		}
		n += 1 + l
		off += 1 + l
	}
}

// skipName steps over a name that may end in a compression pointer.
func skipName(msg []byte, off int) (int, bool) {
	for n := 0; n < 128; n++ {
		if off >= len(msg) {
			return 0, false
		}
		l := int(msg[off])
		switch {
		case l == 0:
			return off + 1, true
		case l&0xc0 == 0xc0:
			if off+2 > len(msg) {
				return 0, false
			}
			return off + 2, true
		case l > 63:
			return 0, false
		}
		off += 1 + l
	}
	return 0, false
}

// skipRR steps over one resource record and returns its type and rdata.
func skipRR(msg []byte, off int) (int, uint16, []byte, bool) {
	off, ok := skipName(msg, off)
	if !ok || off+10 > len(msg) {
		return 0, 0, nil, false
	}
	typ := binary.BigEndian.Uint16(msg[off:])
	rdlen := int(binary.BigEndian.Uint16(msg[off+8:]))
	off += 10
	if off+rdlen > len(msg) {
		return 0, 0, nil, false
	}
	return off + rdlen, typ, msg[off : off+rdlen], true
}

// parseOPT reads an OPT record (RFC 6891 §6.1.2): owner root, CLASS the
// payload size, TTL the extended rcode, version and flags. Unknown options
// are skipped; their presence does not change the answer.
func (r *request) parseOPT(rr, rdata []byte) {
	if r.opt {
		r.optErr = true // two OPT records
		return
	}
	r.opt = true
	if rr[0] != 0 {
		r.optErr = true // owner not the root
		return
	}
	hdr := rr[len(rr)-len(rdata)-10:]
	r.udpSize = binary.BigEndian.Uint16(hdr[2:])
	ttl := binary.BigEndian.Uint32(hdr[4:])
	r.version = uint8(ttl >> 16)
	r.do = ttl&0x8000 != 0
	for len(rdata) > 0 {
		if len(rdata) < 4 {
			r.optErr = true
			return
		}
		code := binary.BigEndian.Uint16(rdata)
		l := int(binary.BigEndian.Uint16(rdata[2:]))
		if 4+l > len(rdata) {
			r.optErr = true
			return
		}
		switch code {
		case optionECS:
			r.parseECS(rdata[4 : 4+l])
		case optionNSID:
			r.nsid = true
		case optionCookie:
			r.parseCookie(rdata[4 : 4+l])
		}
		rdata = rdata[4+l:]
	}
}

// parseECS validates an EDNS Client Subnet option as RFC 7871 §6 asks:
// a known family, a source prefix that fits it, exactly ceil(source/8)
// address bytes, no bit set beyond the prefix, and scope 0 in a query.
// Family 0 with prefix 0 (a client opting out of ECS) is accepted.
func (r *request) parseECS(o []byte) {
	if r.ecs || len(o) < 4 {
		r.ecsErr = true // a second ECS option, or a short one
		return
	}
	r.ecs = true
	r.ecsFam = binary.BigEndian.Uint16(o)
	r.ecsSrc = o[2]
	scope := o[3]
	addr := o[4:]
	maxBits := 0
	switch r.ecsFam {
	case 0:
		maxBits = 0
	case 1:
		maxBits = 32
	case 2:
		maxBits = 128
	default:
		r.ecsErr = true
		return
	}
	n := (int(r.ecsSrc) + 7) / 8
	if int(r.ecsSrc) > maxBits || scope != 0 || len(addr) != n {
		r.ecsErr = true
		return
	}
	if rem := r.ecsSrc % 8; rem != 0 && addr[n-1]&(0xff>>rem) != 0 {
		r.ecsErr = true
		return
	}
	r.ecsBytes = n
	copy(r.ecsAddr[:], addr)
}

// parseCookie reads a COOKIE option (RFC 7873 §5.2.2): an 8-byte client
// cookie, optionally followed by an 8 to 32 byte server cookie. Any other
// length, or a second option, is malformed: FORMERR.
func (r *request) parseCookie(o []byte) {
	if r.cookie || r.cookieErr || len(o) != 8 && (len(o) < 16 || len(o) > 40) {
		r.cookie, r.cookieErr = false, true
		return
	}
	r.cookie = true
	copy(r.clientCookie[:], o[:8])
	r.serverLen = copy(r.serverCookie[:], o[8:])
}
