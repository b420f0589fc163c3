// Package zonefile reads and writes RFC 1035 master files for glb's zones:
// Parse turns a file (as BIND, Knot or NSD write it) into records with the
// line each came from, Plan merges them into a zone or replaces its
// records and says what changes, and Export writes a zone back, with each
// load balancer as the records a client of unknown location gets now.
//
// miekg/dns types stay inside this package: callers see pools records.
package zonefile

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/pools"
)

// Entry is one record of a file and the line it starts on.
type Entry struct {
	Line   int
	Record pools.Record
}

// SOA is a file's SOA record.
type SOA struct {
	Line   int
	Serial uint32
	TTL    uint32
	pools.SOA
}

// File is a parsed master file: its SOA and apex NS apart (they are the
// zone's own fields, compared rather than applied), every other record in
// Records.
type File struct {
	// Unit is what Entry.Line counts: "line" (a file) or "record" (a
	// transfer); errors name it.
	Unit string
	SOA  *SOA
	// NS are the apex NS records (Record.Content the name server).
	NS      []Entry
	Records []Entry
}

// MaxErrors bounds the errors one file reports.
const MaxErrors = 100

// lineReader counts the lines the parser has read; the parser reads
// byte by byte from an io.ByteReader, so after a record the count is the
// line it ended on.
type lineReader struct {
	r     io.ByteReader
	lines int
	text  []string // every line read so far, to find where a record starts
	cur   []byte
	// back is a line read ahead by skipEntry, given to the parser first.
	back []byte
}

func (l *lineReader) ReadByte() (byte, error) {
	var b byte
	var err error
	if len(l.back) > 0 {
		b, l.back = l.back[0], l.back[1:]
	} else {
		b, err = l.r.ReadByte()
	}
	if err == nil {
		if b == '\n' {
			l.lines++
			l.text = append(l.text, string(l.cur))
			l.cur = l.cur[:0]
		} else {
			l.cur = append(l.cur, b)
		}
	}
	return b, err
}

func (l *lineReader) Read(p []byte) (int, error) {
	for i := range p {
		b, err := l.ReadByte()
		if err != nil {
			return i, err
		}
		p[i] = b
	}
	return len(p), nil
}

// skipEntry passes over the rest of a record the parser gave up on: the
// rest of its line and the lines after it that continue it (led by a
// blank: an owner left out, or a parenthesis's continuation), so that a
// new parser can go on at the next line naming an owner or a directive.
// It reports whether there is one.
func (l *lineReader) skipEntry() bool {
	for len(l.cur) > 0 {
		if b, err := l.ReadByte(); err != nil || b == '\n' {
			break
		}
	}
	for {
		var line []byte
		var err error
		for {
			var b byte
			if b, err = l.r.ReadByte(); err != nil {
				break
			}
			line = append(line, b)
			if b == '\n' {
				break
			}
		}
		if len(line) == 0 {
			return false
		}
		if c := line[0]; c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			l.back = line
			return true
		}
		for _, b := range line {
			if b == '\n' {
				l.lines++
				l.text = append(l.text, string(l.cur))
				l.cur = l.cur[:0]
			} else {
				l.cur = append(l.cur, b)
			}
		}
		if err != nil {
			return false
		}
	}
}

// originInForce is the origin at line: the last $ORIGIN before it
// (relative to the one before that), else zone.
func originInForce(lr *lineReader, line int, zone string) string {
	for n := line - 1; n >= 1; n-- {
		s, _, _ := strings.Cut(strings.TrimSpace(lineText(lr, n)), ";")
		if f := strings.Fields(s); len(f) == 2 && strings.EqualFold(f[0], "$ORIGIN") {
			if dns.IsFqdn(f[1]) {
				return f[1]
			}
			return f[1] + "." + originInForce(lr, n, zone)
		}
	}
	return dns.Fqdn(zone)
}

// startLine is the first line after done that holds a record rather than
// a blank, a comment or a directive; end when there is none.
func (l *lineReader) startLine(done, end int) int {
	for n := done + 1; n < end && n <= len(l.text); n++ {
		s := strings.TrimSpace(l.text[n-1])
		if s != "" && s[0] != ';' && s[0] != '$' {
			return n
		}
	}
	return end
}

var parseErrLine = regexp.MustCompile(`^dns: (.*): "(.*)" at line: (\d+):\d+$`)

// Parse reads a master file of the zone apex (its origin until $ORIGIN
// says otherwise); ttl is the TTL of records that give none before any
// $TTL. It refuses $INCLUDE. The error is a *pools.ValidationError whose
// paths name lines ("line 12"), every error of the file up to MaxErrors:
// after a syntax error reading goes on at the next line that names an
// owner or is a directive (skipEntry). The file holds the records read
// without error even when there is one, so that Import can report the
// rest.
func Parse(r io.Reader, apex string, ttl uint32) (*File, error) {
	var br io.ByteReader
	if b, ok := r.(io.ByteReader); ok {
		br = b
	} else {
		br = &byteReader{r: r}
	}
	lr := &lineReader{r: br}
	zone := pools.CanonicalName(apex)
	f := &File{Unit: "line"}
	var errs []pools.FieldError
	bad := func(line int, format string, a ...any) {
		if len(errs) < MaxErrors {
			errs = append(errs, pools.FieldError{Path: "line " + strconv.Itoa(line), Message: fmt.Sprintf(format, a...)})
		}
	}
	done := 0
	for base := 0; ; {
		zp := dns.NewZoneParser(lr, originInForce(lr, base+1, zone), "")
		zp.SetDefaultTTL(ttlInForce(lr, base+1, ttl))
		zp.SetIncludeAllowed(false)
		done = f.read(zp, lr, zone, ttl, done, bad)
		err := zp.Err()
		if err == nil {
			break
		}
		bad(base+parseLine(err, lr), "%s", parseMessage(err))
		if len(errs) >= MaxErrors {
			break
		}
		if !lr.skipEntry() {
			break // the end of the file
		}
		base = lr.lines
		done = base // what was passed over holds no record's start
	}
	if len(errs) == 0 && f.SOA == nil && len(f.Records) == 0 && len(f.NS) == 0 {
		errs = append(errs, pools.FieldError{Path: "line 1", Message: "the file holds no record"})
	}
	if len(errs) > 0 {
		return f, &pools.ValidationError{Errors: errs}
	}
	return f, nil
}

// read keeps the records zp parses, each with the line it starts on
// (done is the last line of the record before); it returns the last line
// read.
func (f *File) read(zp *dns.ZoneParser, lr *lineReader, zone string, ttl uint32, done int, bad func(int, string, ...any)) int {
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		end := lr.lines
		if len(lr.cur) > 0 {
			end++ // the last line has no newline
		}
		line := lr.startLine(done, end)
		if g := strings.TrimSpace(lineText(lr, end)); strings.HasPrefix(g, "$GENERATE") {
			line = end
			if !generateHasTTL(g) {
				// The library gives a $GENERATE record without a TTL its
				// own default, where BIND gives the $TTL in force.
				rr.Header().Ttl = ttlInForce(lr, end, ttl)
			}
		}
		if end > done {
			done = end
		}
		f.add(rr, zone, line, func(msg string) { bad(line, "%s", msg) })
	}
	return done
}

// generateHasTTL reports whether a $GENERATE line (range lhs [ttl]
// [class] type rhs) gives a TTL.
func generateHasTTL(line string) bool {
	line, _, _ = strings.Cut(line, ";")
	f := strings.Fields(line)
	for i := 3; i < len(f) && i < 5; i++ {
		if _, ok := parseTTL(f[i]); ok {
			return true
		}
	}
	return false
}

// ttlInForce is the value of the last $TTL before line, else def.
func ttlInForce(lr *lineReader, line int, def uint32) uint32 {
	for n := line - 1; n >= 1; n-- {
		s, _, _ := strings.Cut(strings.TrimSpace(lineText(lr, n)), ";")
		if f := strings.Fields(s); len(f) == 2 && strings.EqualFold(f[0], "$TTL") {
			if v, ok := parseTTL(f[1]); ok {
				return v
			}
		}
	}
	return def
}

// parseTTL reads a TTL as BIND writes one: seconds, or units such as 1h30m.
func parseTTL(s string) (uint32, bool) {
	if s == "" {
		return 0, false
	}
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		return uint32(n), true
	}
	var total, cur uint64
	digits := false
	for _, c := range strings.ToLower(s) {
		switch {
		case c >= '0' && c <= '9':
			cur, digits = cur*10+uint64(c-'0'), true
		case digits && strings.ContainsRune("smhdw", c):
			total += cur * map[rune]uint64{'s': 1, 'm': 60, 'h': 3600, 'd': 86400, 'w': 604800}[c]
			cur, digits = 0, false
		default:
			return 0, false
		}
		if total+cur > 1<<32-1 {
			return 0, false
		}
	}
	if digits {
		return 0, false
	}
	return uint32(total), true
}

// add keeps a parsed record: the SOA and apex NS apart, the rest as
// records; bad hears why one cannot be kept.
func (f *File) add(rr dns.RR, zone string, line int, bad func(string)) {
	e, msg := entry(rr, zone)
	if msg != "" {
		bad(msg)
		return
	}
	e.Line = line
	h := rr.Header()
	switch {
	case h.Rrtype == dns.TypeSOA:
		if f.SOA != nil {
			bad(fmt.Sprintf("a second SOA (the first is at %s %d)", f.Unit, f.SOA.Line))
			return
		}
		if pools.CanonicalName(h.Name) != zone {
			bad(fmt.Sprintf("the SOA of %s is not at the apex %s", h.Name, zone))
			return
		}
		s := rr.(*dns.SOA)
		f.SOA = &SOA{Line: line, Serial: s.Serial, TTL: h.Ttl, SOA: pools.SOA{
			MName: pools.CanonicalName(s.Ns), RName: pools.CanonicalName(s.Mbox),
			Refresh: s.Refresh, Retry: s.Retry, Expire: s.Expire, Minimum: s.Minttl,
		}}
	case h.Rrtype == dns.TypeNS && e.Record.Name == zone:
		e.Record.Content = pools.CanonicalName(rr.(*dns.NS).Ns)
		f.NS = append(f.NS, e)
	default:
		f.Records = append(f.Records, e)
	}
}

func lineText(lr *lineReader, n int) string {
	if n >= 1 && n <= len(lr.text) {
		return lr.text[n-1]
	}
	if n == len(lr.text)+1 {
		return string(lr.cur)
	}
	return ""
}

// parseLine is the line of a parse error: the parser's own, else the
// last line read.
func parseLine(err error, lr *lineReader) int {
	if m := parseErrLine.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[3])
		return n
	}
	return max(lr.lines, 1)
}

// parseMessage words a parse error for an operator: without the
// library's prefix, and $INCLUDE said plainly.
func parseMessage(err error) string {
	m := parseErrLine.FindStringSubmatch(err.Error())
	if m == nil {
		return err.Error()
	}
	msg, tok := m[1], m[2]
	if strings.Contains(msg, "$INCLUDE") {
		return "$INCLUDE is not accepted: send the zone as one file"
	}
	if tok == "" {
		return msg
	}
	return msg + " at " + strconv.Quote(tok)
}

// entry turns a parsed record into a pools record; msg says why it
// cannot be kept.
func entry(rr dns.RR, zone string) (Entry, string) {
	h := rr.Header()
	name := pools.CanonicalName(h.Name)
	if h.Class != dns.ClassINET {
		return Entry{}, "class " + dns.Class(h.Class).String() + ": only IN is served"
	}
	if !pools.InZone(name, zone) {
		return Entry{}, strconv.Quote(strings.TrimSuffix(h.Name, ".")) + " is not inside zone " + strconv.Quote(zone)
	}
	if strings.HasPrefix(name, "*.") || name == "*" {
		return Entry{}, "wildcard owner " + strconv.Quote(name) + ": glb serves no wildcards"
	}
	typ := TypeName(h.Rrtype)
	rec := pools.Record{Name: name, Type: typ, TTL: h.Ttl}
	if h.Rrtype == dns.TypeSOA {
		return Entry{Record: rec}, ""
	}
	presentation, msg := pools.TypeKept(typ)
	if msg != "" {
		return Entry{}, typ + ": " + msg
	}
	if _, generic := rr.(*dns.RFC3597); presentation && !generic {
		rec.Content = RData(rr)
	} else {
		g := new(dns.RFC3597)
		if err := g.ToRFC3597(rr); err != nil {
			return Entry{}, "cannot encode " + typ + ": " + err.Error()
		}
		rec.Content = `\# ` + strconv.Itoa(len(g.Rdata)/2) + " " + g.Rdata
		if g.Rdata == "" {
			rec.Content = `\# 0`
		}
	}
	return Entry{Record: rec}, ""
}

// TypeName is the mnemonic glb keeps for a type: the registry's as
// pools spells it, else TYPEnnn.
func TypeName(t uint16) string {
	s := dns.Type(t).String()
	if c, ok := pools.RRTypeCode(s); ok && c == t && !strings.HasPrefix(s, "TYPE") {
		return s
	}
	return "TYPE" + strconv.Itoa(int(t))
}

// RData is a record's rdata in presentation format.
func RData(rr dns.RR) string {
	return strings.TrimPrefix(rr.String(), rr.Header().String())
}

// byteReader reads a byte at a time from a reader without buffering
// beyond what the parser asked for.
type byteReader struct {
	r   io.Reader
	buf [4096]byte
	n   int
	off int
	err error
}

func (b *byteReader) ReadByte() (byte, error) {
	for b.off == b.n {
		if b.err != nil {
			return 0, b.err
		}
		b.n, b.err = b.r.Read(b.buf[:])
		b.off = 0
		if b.n == 0 && b.err == nil {
			b.err = io.ErrNoProgress
		}
	}
	c := b.buf[b.off]
	b.off++
	return c, nil
}
