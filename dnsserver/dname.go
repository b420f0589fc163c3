package dnsserver

import "encoding/binary"

const (
	// typeDNAME is RFC 6672's redirection of a subtree.
	typeDNAME = 39
	// maxNameLen is the longest name in wire form (RFC 1035 §3.1).
	maxNameLen = 255
)

// compileDNAMEs notes whether any name of z has a DNAME, so that zones
// without one pay nothing, and marks the names that exist below one
// (occluded: RFC 6672 redirects them too), so that every other existing
// name answers without looking for one.
func (z *zone) compileDNAMEs() {
	for _, n := range z.nodes {
		if n.rrset(typeDNAME) != nil {
			z.hasDNAME = true
			break
		}
	}
	if !z.hasDNAME {
		return
	}
	for _, n := range z.nodes {
		if d, _ := z.dnameAbove(n.name); d != nil {
			n.underDNAME = true
		}
	}
}

// dnameAbove is the node with a DNAME closest above name (strictly: a
// DNAME redirects the names below its owner, not the owner), and the
// length of name's part below that owner; nil when none.
func (z *zone) dnameAbove(name []byte) (*node, int) {
	if !z.hasDNAME {
		return nil, 0
	}
	for off := 1 + int(name[0]); off < len(name) && len(name)-off >= len(z.apex); off += 1 + int(name[off]) {
		if n := z.nodes[string(name[off:])]; n != nil && n.rrset(typeDNAME) != nil {
			return n, off
		}
	}
	return nil, 0
}

// synthesize answers name below d's DNAME as RFC 6672 §3.1 says: the
// DNAME, then a CNAME from name to name with d's owner replaced by the
// DNAME's target, with the DNAME's TTL. The CNAME is made here, not
// stored, so it is not signed (§5.3.1: validators check the DNAME's
// signature and synthesise it themselves). It returns the new name in
// lower case, written into buf (the worker's: nothing is allocated), or
// nil when it would exceed 255 octets (then the reply is YXDOMAIN).
func (b *builder) synthesize(d *node, name []byte, prefix int, buf *[maxNameLen]byte) []byte {
	t := d.rrset(typeDNAME).rrs[0]
	b.answer(d.name, t)
	b.seal(d.name, false)
	target := t[10:]
	if prefix+len(target) > maxNameLen {
		b.rcode = rcodeYXDomain
		return nil
	}
	out := append(append(buf[:0], name[:prefix]...), target...)
	for i, c := range out {
		if 'A' <= c && c <= 'Z' {
			out[i] = c + 'a' - 'A' // length octets are below 64, never letters
		}
	}
	b.owner(name)
	b.buf = append(b.buf, 0, typeCNAME, 0, classIN)
	b.buf = append(b.buf, t[4:8]...) // the DNAME's TTL
	b.buf = binary.BigEndian.AppendUint16(b.buf, uint16(len(out)))
	b.buf = append(b.buf, out...)
	b.an++
	return out
}
