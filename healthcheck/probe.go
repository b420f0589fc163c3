package healthcheck

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/glb-dns/glb/pools"
)

// UserAgent is sent by HTTP probes unless the monitor sets its own, so that
// origin operators can tell health checks from users in their logs.
const UserAgent = "glb-healthcheck/1 (+https://github.com/glb-dns/glb)"

// result is the outcome of one check (after retries).
type result struct {
	healthy bool
	// reason is short and human: why when not healthy; when healthy, a
	// note worth showing (a tls monitor's days left), usually empty.
	reason string
	rtt    time.Duration // of the successful attempt
}

// prober runs one attempt; retries and timeouts around it are the caller's.
type prober interface {
	attempt(ctx context.Context) result
}

func (t *target) key() pools.OriginKey { return pools.OriginKey{Pool: t.pool, Origin: t.origin} }

// hostPort is the dial address; net.JoinHostPort brackets IPv6 literals.
func (t *target) hostPort() string {
	return net.JoinHostPort(t.address, strconv.Itoa(t.port))
}

// budget is the longest one check can take: every attempt timing out.
func (t *target) budget() time.Duration {
	return t.timeout * time.Duration(t.retries+1)
}

// newProber builds the prober for a target once, when its pair starts, so
// that nothing is parsed or set up per check. HTTP probes take their
// client from cs (nil: a client of their own, from the system's choice of
// source address).
func newProber(t *target, cs *clients) prober {
	switch t.typ {
	case pools.MonitorHTTP, pools.MonitorHTTPS:
		return newHTTPProber(t, cs)
	case pools.MonitorTCP:
		return newTCPProber(t, cs.source())
	case pools.MonitorUDP:
		return newUDPProber(t, cs.source())
	case pools.MonitorDNS:
		return newDNSProber(t, cs.source())
	case pools.MonitorTLS:
		return newTLSProber(t, cs.source())
	case pools.MonitorSMTP:
		return newSMTPProber(t, cs.source())
	case pools.MonitorGRPC:
		return newGRPCProber(t, cs.source())
	case pools.MonitorICMP:
		return newICMPProber(t, cs.source())
	case pools.MonitorFeed:
		return failingProber("feed monitors take words fed in; they are not probed")
	}
	return failingProber("unsupported monitor type " + strconv.Quote(string(t.typ)))
}

// failingProber stands in for a target that cannot be checked as
// configured, so that the origin shows why instead of silently passing.
type failingProber string

func (f failingProber) attempt(context.Context) result { return result{reason: string(f)} }

// check runs up to 1 + retries attempts back to back and returns the first
// success or the last failure.
func check(ctx context.Context, p prober, retries int) result {
	var r result
	for i := 0; i <= retries; i++ {
		r = p.attempt(ctx)
		if r.healthy || ctx.Err() != nil {
			return r
		}
	}
	return r
}

// dialer returns a dial function that binds src as the local address.
// Binding applies to IP origins of src's family and to hostnames (which Go
// then resolves to src's family only); an IP origin of the other family is
// dialled from the system's choice of source, since no bound socket could
// reach it.
func dialer(src netip.Addr) func(ctx context.Context, network, addr string) (net.Conn, error) {
	plain := &net.Dialer{}
	if !src.IsValid() {
		return plain.DialContext
	}
	src = src.Unmap()
	bound := &net.Dialer{LocalAddr: &net.TCPAddr{IP: src.AsSlice(), Zone: src.Zone()}}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, _, err := net.SplitHostPort(addr); err == nil {
			if ip, err := netip.ParseAddr(host); err == nil && ip.Unmap().Is4() != src.Is4() {
				return plain.DialContext(ctx, network, addr)
			}
		}
		return bound.DialContext(ctx, network, addr)
	}
}

// describe turns a probe error into a short reason an operator can act on;
// Go's wrapped errors ("Get \"http://...\": dial tcp ...: connect: ...")
// repeat the address and bury the cause.
func describe(ctx context.Context, err error, timeout time.Duration) string {
	var (
		dnsErr  *net.DNSError
		certErr *tls.CertificateVerificationError
		recErr  tls.RecordHeaderError
		opErr   *net.OpError
		urlErr  *url.Error
	)
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, os.ErrDeadlineExceeded):
		return "timeout after " + timeout.String()
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, syscall.EHOSTUNREACH):
		return "host unreachable"
	case errors.Is(err, syscall.ENETUNREACH):
		return "network unreachable"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return "source address not available"
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return "resolve " + dnsErr.Name + ": no such host"
		}
		return "resolve " + dnsErr.Name + ": " + dnsErr.Err
	case errors.As(err, &certErr):
		return "TLS: " + certErr.Err.Error()
	case errors.As(err, &recErr):
		return "TLS handshake: origin did not answer with TLS"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed by origin"
	case errors.As(err, &opErr) && opErr.Err != nil:
		return opErr.Op + ": " + opErr.Err.Error()
	case errors.As(err, &urlErr):
		return urlErr.Err.Error()
	}
	return err.Error()
}
