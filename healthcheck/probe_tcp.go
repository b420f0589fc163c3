package healthcheck

import (
	"context"
	"net"
	"net/netip"
	"time"
)

// tcpProber checks that the origin accepts a TCP connection on the
// monitor's port; nothing is sent.
type tcpProber struct {
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)
	addr    string
	timeout time.Duration
}

func newTCPProber(t *target, src netip.Addr) prober {
	if t.port == 0 {
		return failingProber("tcp monitor has no port")
	}
	return &tcpProber{dial: dialer(src), addr: t.hostPort(), timeout: t.timeout}
}

func (p *tcpProber) attempt(ctx context.Context) result {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	start := time.Now()
	conn, err := p.dial(ctx, "tcp", p.addr)
	if err != nil {
		return result{reason: describe(ctx, err, p.timeout)}
	}
	rtt := time.Since(start)
	_ = conn.Close()
	return result{healthy: true, rtt: rtt}
}
