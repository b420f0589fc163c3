package dnsserver

import (
	"fmt"

	"github.com/miekg/dns"
)

// Server identity (RFC 4892, RFC 5001): the NSID option and the CHAOS TXT
// names operators query to tell the nodes of a cluster apart. Both carry
// the same identity (Config.NSID); the software version is told only when
// the operator chose a string to tell.

// chaosTXT packs a CH-class TXT record tail carrying s (split into
// 255-byte strings), nil for an empty s.
func chaosTXT(s string) ([]byte, error) {
	if s == "" {
		return nil, nil
	}
	var parts []string
	for len(s) > 255 {
		parts, s = append(parts, s[:255]), s[255:]
	}
	parts = append(parts, s)
	t, err := tail(&dns.TXT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeTXT, Class: dns.ClassCHAOS}, Txt: parts})
	if err != nil {
		return nil, fmt.Errorf("chaos TXT %q: %w", s, err)
	}
	return t, nil
}

// chaos answers a CHAOS-class query: id.server. and hostname.bind. with
// the identity, version.bind. and version.server. with the version
// string; REFUSED when that is not set or for any other name.
func (s *Server) chaos(b *builder) {
	var t []byte
	switch string(b.r.name()) {
	case "\x02id\x06server\x00", "\x08hostname\x04bind\x00":
		t = s.edge.chaosID
	case "\x07version\x04bind\x00", "\x07version\x06server\x00":
		t = s.edge.chaosVersion
	}
	if t == nil {
		b.rcode = rcodeRefused
		return
	}
	b.flags |= flagAA
	if q := b.r.qtype; q == typeTXT || q == typeANY {
		b.answer(b.r.name(), t)
	}
}
