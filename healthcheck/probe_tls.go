package healthcheck

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/netip"
	"time"
)

// day is a day of certificate validity.
const day = 24 * time.Hour

// tlsProber completes a TLS handshake with the origin and checks its leaf
// certificate: verified against the system's roots for server_name (else
// the origin's address) unless allow_insecure, and valid for more than
// min_days_valid days.
type tlsProber struct {
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)
	addr    string
	timeout time.Duration
	config  *tls.Config
	minDays int
	now     func() time.Time
}

func newTLSProber(t *target, src netip.Addr) prober {
	name := t.serverName
	if name == "" {
		name = t.address
	}
	return &tlsProber{
		dial:    dialer(src),
		addr:    t.hostPort(),
		timeout: t.timeout,
		config:  &tls.Config{ServerName: name, InsecureSkipVerify: t.insecure},
		minDays: t.minDays,
		now:     time.Now,
	}
}

func (p *tlsProber) attempt(ctx context.Context) result {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	start := time.Now()
	raw, err := p.dial(ctx, "tcp", p.addr)
	if err != nil {
		return result{reason: describe(ctx, err, p.timeout)}
	}
	conn := tls.Client(raw, p.config)
	defer conn.Close()
	if err := conn.HandshakeContext(ctx); err != nil {
		return result{reason: describe(ctx, err, p.timeout)}
	}
	rtt := time.Since(start)
	certs := conn.ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return result{reason: "TLS: origin sent no certificate"}
	}
	left := certs[0].NotAfter.Sub(p.now())
	days := int(left / day) // whole days left, rounded down
	switch {
	case left <= 0:
		return result{reason: fmt.Sprintf("certificate expired %s ago (%s)", ago(-left), certs[0].NotAfter.UTC().Format(time.DateOnly))}
	case days < p.minDays:
		return result{reason: fmt.Sprintf("certificate expires in %d days, under min_days_valid %d", days, p.minDays)}
	}
	return result{healthy: true, rtt: rtt, reason: fmt.Sprintf("certificate valid for %d more days", days)}
}

// ago is a past span for a reason: days when at least one.
func ago(d time.Duration) string {
	if d >= day {
		return fmt.Sprintf("%d days", int(d/day))
	}
	return d.Round(time.Second).String()
}
