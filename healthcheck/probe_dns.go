package healthcheck

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/glb-dns/glb/pools"
)

// dnsProber asks the origin one question over UDP or TCP and checks the
// response code and, when expected_answer is set, that an answer record's
// data contains it. The question asks for recursion, so that a resolver
// origin answers from its work rather than from its cache alone; an
// authoritative server ignores the bit.
type dnsProber struct {
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)
	addr     string
	timeout  time.Duration
	tcp      bool
	question dnsmessage.Question
	rcode    dnsmessage.RCode
	answer   string // lower-cased
	rawAns   string
}

func newDNSProber(t *target, src netip.Addr) prober {
	name, err := dnsmessage.NewName(dns1(t.queryName))
	if err != nil {
		return failingProber("bad query_name: " + err.Error())
	}
	qt, ok := pools.DNSQueryTypes[strings.ToUpper(t.queryType)]
	if !ok {
		return failingProber("bad query_type " + strconv.Quote(t.queryType))
	}
	rcode := 0
	if t.rcode != "" {
		if rcode, ok = pools.DNSRcodes[strings.ToUpper(t.rcode)]; !ok {
			return failingProber("bad expected_rcode " + strconv.Quote(t.rcode))
		}
	}
	return &dnsProber{
		dial: dialer(src), addr: t.hostPort(), timeout: t.timeout, tcp: t.protocol == pools.DNSOverTCP,
		question: dnsmessage.Question{Name: name, Type: dnsmessage.Type(qt), Class: dnsmessage.ClassINET},
		rcode:    dnsmessage.RCode(rcode), answer: strings.ToLower(t.answer), rawAns: t.answer,
	}
}

// dns1 is name fully qualified.
func dns1(name string) string {
	if strings.HasSuffix(name, ".") {
		return name
	}
	return name + "."
}

func (p *dnsProber) attempt(ctx context.Context) result {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	id := uint16(rand.Uint32())
	q := dnsmessage.Message{Header: dnsmessage.Header{ID: id, RecursionDesired: true},
		Questions: []dnsmessage.Question{p.question}}
	msg, err := q.Pack()
	if err != nil {
		return result{reason: "pack query: " + err.Error()}
	}
	start := time.Now()
	var reply []byte
	if p.tcp {
		reply, err = p.exchangeTCP(ctx, msg)
	} else {
		buf := make([]byte, maxDatagram)
		var n int
		n, err = exchangeUDP(ctx, p.dial, p.addr, msg, buf, func(b []byte) bool {
			// Another query's late reply or a forgery is not ours.
			return len(b) >= 2 && binary.BigEndian.Uint16(b) == id
		})
		reply = buf[:n]
	}
	if err != nil {
		return result{reason: describe(ctx, err, p.timeout)}
	}
	rtt := time.Since(start)
	var m dnsmessage.Message
	if err := m.Unpack(reply); err != nil {
		return result{reason: "malformed DNS response: " + err.Error()}
	}
	if m.ID != id || !m.Response {
		return result{reason: "DNS response does not match the query"}
	}
	if m.Truncated && !p.tcp {
		// A truncated answer may lack the record expected: say so
		// rather than blame the origin's data.
		if p.answer != "" {
			return result{reason: "DNS response truncated over UDP; use protocol tcp"}
		}
	}
	if m.RCode != p.rcode {
		return result{reason: fmt.Sprintf("DNS rcode %s, expected %s", rcodeName(m.RCode), rcodeName(p.rcode))}
	}
	if p.answer != "" {
		for _, rr := range m.Answers {
			if strings.Contains(strings.ToLower(rdata(rr.Body)), p.answer) {
				return result{healthy: true, rtt: rtt}
			}
		}
		return result{reason: fmt.Sprintf("no answer record contains %q (%d answers)", p.rawAns, len(m.Answers))}
	}
	return result{healthy: true, rtt: rtt}
}

// exchangeTCP sends msg with its two-byte length and reads one response.
func (p *dnsProber) exchangeTCP(ctx context.Context, msg []byte) ([]byte, error) {
	conn, err := p.dial(ctx, "tcp", p.addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if d, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(d)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	out := make([]byte, 2+len(msg))
	binary.BigEndian.PutUint16(out, uint16(len(msg)))
	copy(out[2:], msg)
	if _, err := conn.Write(out); err != nil {
		return nil, err
	}
	var l [2]byte
	if _, err := io.ReadFull(conn, l[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint16(l[:]))
	if _, err := io.ReadFull(conn, b); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return b, nil
}

var rcodeNames = func() map[dnsmessage.RCode]string {
	m := map[dnsmessage.RCode]string{}
	for name, c := range pools.DNSRcodes {
		m[dnsmessage.RCode(c)] = name
	}
	return m
}()

func rcodeName(c dnsmessage.RCode) string {
	if n, ok := rcodeNames[c]; ok {
		return n
	}
	return "RCODE" + strconv.Itoa(int(c))
}

// rdata is a record's data in presentation format, for the types an
// expected_answer is usually written for; others as the parser shows them.
func rdata(b dnsmessage.ResourceBody) string {
	switch r := b.(type) {
	case *dnsmessage.AResource:
		return netip.AddrFrom4(r.A).String()
	case *dnsmessage.AAAAResource:
		return netip.AddrFrom16(r.AAAA).String()
	case *dnsmessage.CNAMEResource:
		return r.CNAME.String()
	case *dnsmessage.NSResource:
		return r.NS.String()
	case *dnsmessage.PTRResource:
		return r.PTR.String()
	case *dnsmessage.MXResource:
		return strconv.Itoa(int(r.Pref)) + " " + r.MX.String()
	case *dnsmessage.TXTResource:
		return strings.Join(r.TXT, "")
	case *dnsmessage.SRVResource:
		return fmt.Sprintf("%d %d %d %s", r.Priority, r.Weight, r.Port, r.Target)
	case *dnsmessage.SOAResource:
		return fmt.Sprintf("%s %s %d", r.NS, r.MBox, r.Serial)
	}
	return b.GoString()
}
