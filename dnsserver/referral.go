package dnsserver

import "bytes"

// Zone cuts (RFC 1034 §4.2.1, §4.3.2). An NS RRset on a name below the
// apex delegates everything at and below it: the zone is not
// authoritative there. A query at or below a cut gets a referral (AA
// clear, the NS RRset in authority, glue in additional), except a DS
// query at the cut itself, which the parent side answers (RFC 4035
// §3.1.4.1). Records below a cut are kept only as glue: they are never
// answered, only copied into the additional section of referrals and of
// apex NS answers.

// cut is one delegation point, its referral packed at compile time.
type cut struct {
	name []byte   // owner, lower-case wire form
	ns   [][]byte // NS tails
	glue []glue   // A/AAAA of the NS names inside the zone
}

// glue is one address record for the additional section.
type glue struct {
	owner []byte
	tail  []byte
}

// compileCuts finds the delegation points of z and the glue of its NS
// sets, apex included. It runs after every record is in z.nodes.
func (z *zone) compileCuts() {
	for _, n := range z.nodes {
		if len(n.name) <= len(z.apex) {
			continue
		}
		if set := n.rrset(typeNS); set != nil {
			n.cut = &cut{name: n.name, ns: set.rrs, glue: z.glueFor(set.rrs)}
			z.hasCuts = true
		}
	}
	if z.hasCuts {
		for _, n := range z.nodes {
			n.deleg = z.enclosingCut(n.name)
		}
	}
	if apex := z.nodes[string(z.apex)]; apex != nil {
		if set := apex.rrset(typeNS); set != nil {
			z.apexGlue = z.glueFor(set.rrs)
		}
	}
}

// enclosingCut is the highest cut at or above name (a cut below another
// cut is occluded by it), nil if none.
func (z *zone) enclosingCut(name []byte) *cut {
	var found *cut
	for off := 0; len(name)-off > len(z.apex); off += 1 + int(name[off]) {
		if n := z.nodes[string(name[off:])]; n != nil && n.cut != nil {
			found = n.cut
		}
	}
	return found
}

// glueFor collects the A and AAAA records of the NS targets that lie in
// z: only there does this server know the addresses (in-bailiwick).
// Targets elsewhere get none, so nothing unsolicited is added.
func (z *zone) glueFor(ns [][]byte) []glue {
	var out []glue
	for _, t := range ns {
		target := nsTarget(t)
		if !inZone(target, z.apex) {
			continue
		}
		n := z.nodes[string(target)]
		if n == nil {
			continue
		}
		for _, typ := range [...]uint16{typeA, typeAAAA} {
			if set := n.rrset(typ); set != nil {
				for _, rr := range set.rrs {
					out = append(out, glue{owner: n.name, tail: rr})
				}
			}
		}
	}
	return out
}

// nsTarget is the rdata of an NS tail packed without compression: the
// target name in wire form. Targets are lower-cased at compile time.
func nsTarget(tail []byte) []byte { return bytes.ToLower(tail[10:]) }

// inZone reports whether the wire name is apex or below it.
func inZone(name, apex []byte) bool {
	for off := 0; off < len(name); off += 1 + int(name[off]) {
		if len(name)-off == len(apex) {
			return bytes.Equal(name[off:], apex)
		}
		if len(name)-off < len(apex) {
			return false
		}
	}
	return false
}

// delegation returns the cut that name (lower-case wire form, inside z)
// lies at or below, nil when z is authoritative for it. The closest
// existing node is the first suffix found; zones without cuts pay
// nothing.
func (z *zone) delegation(name []byte) *cut {
	if !z.hasCuts {
		return nil
	}
	for off := 0; off < len(name); off += 1 + int(name[off]) {
		if n := z.nodes[string(name[off:])]; n != nil {
			return n.deleg
		}
	}
	return nil
}

// referral answers a query at or below cut c: NOERROR, AA clear, empty
// answer, the NS RRset in authority, its glue in additional; in a signed
// answer the DS RRset or the proof that there is none (sign.go).
func (s *Server) referral(z *zone, c *cut, b *builder) {
	b.flags &^= flagAA
	b.cut = c
	for _, t := range c.ns {
		b.authority(c.name, t)
	}
	b.delegationProof(z, c)
	b.glue(c.glue)
}

// glue adds address records to the additional section.
func (b *builder) glue(gs []glue) {
	for i := range gs {
		b.owner(gs[i].owner)
		b.buf = append(b.buf, gs[i].tail...)
		b.ar++
	}
}
