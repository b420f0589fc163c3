package dnsserver

import "encoding/binary"

// Extended DNS Errors (RFC 8914) on the answer path: a code and a fixed
// text per reason, chosen where the reason is known and written into the
// OPT record by finish, when the query had one (§3: never without). The
// texts are constants, so that nothing is allocated per query.

const optionEDE = 15

// Reasons of the answer path (the UPDATE path builds its own).
const (
	edeTextNotServed = "not a zone served here"
	edeTextTransfer  = "zone transfers are not offered; zones are replicated through the store"
	edeTextNotReady  = "no configuration loaded yet"
	edeTextPanic     = "internal error"
	edeTextFailOpen  = "every origin of the pool is down; answering with all of them"
)

// setEDE records the error to send; the first reason given wins.
func (b *builder) setEDE(code uint16, text string) {
	if b.edeOn {
		return
	}
	b.edeOn, b.edeCode, b.edeText = true, code, text
}

// edeLen is the size of the EDE option in the OPT record, 0 for none.
func (b *builder) edeLen() int {
	if !b.edeOn {
		return 0
	}
	return 4 + 2 + len(b.edeText)
}

// writeEDE appends the EDE option.
func (b *builder) writeEDE() {
	if !b.edeOn {
		return
	}
	var h [6]byte
	binary.BigEndian.PutUint16(h[0:], optionEDE)
	binary.BigEndian.PutUint16(h[2:], uint16(2+len(b.edeText)))
	binary.BigEndian.PutUint16(h[4:], b.edeCode)
	b.buf = append(b.buf, h[:]...)
	b.buf = append(b.buf, b.edeText...)
}
