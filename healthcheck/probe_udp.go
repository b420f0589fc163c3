package healthcheck

import (
	"bytes"
	"context"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/glb-dns/glb/pools"
)

// maxDatagram is the largest reply read; a larger one is truncated, and
// expect is searched in what was read.
const maxDatagram = 64 << 10

// udpProber sends one datagram from a socket of its own per attempt and
// waits for a reply containing expect (any reply when expect is empty).
type udpProber struct {
	dial         func(ctx context.Context, network, addr string) (net.Conn, error)
	addr         string
	timeout      time.Duration
	send, expect []byte
	expectRaw    string
}

func newUDPProber(t *target, src netip.Addr) prober {
	if t.port == 0 {
		return failingProber("udp monitor has no port")
	}
	send, err := pools.Payload(t.send, t.encoding)
	if err != nil {
		return failingProber("bad send: " + err.Error())
	}
	expect, err := pools.Payload(t.expect, t.encoding)
	if err != nil {
		return failingProber("bad expect: " + err.Error())
	}
	return &udpProber{dial: dialer(src), addr: t.hostPort(), timeout: t.timeout,
		send: send, expect: expect, expectRaw: t.expect}
}

func (p *udpProber) attempt(ctx context.Context) result {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	buf := make([]byte, maxDatagram)
	start := time.Now()
	n, err := exchangeUDP(ctx, p.dial, p.addr, p.send, buf, nil)
	if err != nil {
		return result{reason: describe(ctx, err, p.timeout)}
	}
	rtt := time.Since(start)
	if !bytes.Contains(buf[:n], p.expect) {
		return result{reason: "reply does not contain " + strconv.Quote(p.expectRaw) + ": " + quoteReply(buf[:n])}
	}
	return result{healthy: true, rtt: rtt}
}

// exchangeUDP sends msg on a fresh connected socket and reads into buf
// until a datagram that accept takes (nil: the first) or ctx ends. The
// socket is connected, so only the origin's address can answer, and an
// ICMP port unreachable comes back as connection refused.
func exchangeUDP(ctx context.Context, dial func(ctx context.Context, network, addr string) (net.Conn, error),
	addr string, msg, buf []byte, accept func([]byte) bool) (int, error) {
	conn, err := dial(ctx, "udp", addr)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	if d, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(d)
	}
	// A cancelled check (the pair removed) must not wait out its timeout.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := conn.Write(msg); err != nil {
		return 0, err
	}
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return 0, err
		}
		if accept == nil || accept(buf[:n]) {
			return n, nil
		}
	}
}

// quoteReply shows the start of a reply in a reason.
func quoteReply(b []byte) string {
	const show = 32
	if len(b) > show {
		return strconv.Quote(string(b[:show])) + "…"
	}
	return strconv.Quote(string(b))
}
