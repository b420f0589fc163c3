package healthcheck

import (
	"context"
	"crypto/tls"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// grpcProber asks the standard grpc.health.v1.Health/Check for a service
// and wants SERVING. Each attempt makes its own connection, as a new
// client would meet the origin: a connection kept between checks would
// hide a listener that no longer accepts, and gRPC's reconnect backoff
// would delay seeing it come back.
type grpcProber struct {
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)
	addr    string
	timeout time.Duration
	service string
	config  *tls.Config // nil in the clear; tests set its roots
}

func newGRPCProber(t *target, src netip.Addr) prober {
	p := &grpcProber{dial: dialer(src), addr: t.hostPort(), timeout: t.timeout, service: t.service}
	if t.tls {
		name := t.serverName
		if name == "" {
			name = t.address
		}
		p.config = &tls.Config{ServerName: name, InsecureSkipVerify: t.insecure}
	}
	return p
}

func (p *grpcProber) attempt(ctx context.Context) result {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	creds := insecure.NewCredentials()
	if p.config != nil {
		creds = credentials.NewTLS(p.config)
	}
	// The dial's own error says more than gRPC's wrapping of it.
	var (
		mu      sync.Mutex
		dialErr error
	)
	conn, err := grpc.NewClient("passthrough:///"+p.addr,
		grpc.WithTransportCredentials(creds),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			c, err := p.dial(ctx, "tcp", addr)
			if err != nil {
				mu.Lock()
				dialErr = err
				mu.Unlock()
			}
			return c, err
		}))
	if err != nil {
		return result{reason: "gRPC: " + err.Error()}
	}
	defer func() { _ = conn.Close() }()
	start := time.Now()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: p.service},
		grpc.WaitForReady(false))
	rtt := time.Since(start)
	if err != nil {
		mu.Lock()
		de := dialErr
		mu.Unlock()
		return result{reason: grpcReason(ctx, err, de, p.timeout)}
	}
	if s := resp.GetStatus(); s != healthpb.HealthCheckResponse_SERVING {
		return result{reason: "gRPC health: " + s.String()}
	}
	return result{healthy: true, rtt: rtt}
}

// grpcReason is the dial's failure when there was one, else the status
// the server or the transport gave ("gRPC NotFound: unknown service").
func grpcReason(ctx context.Context, err, dialErr error, timeout time.Duration) string {
	st, _ := status.FromError(err)
	switch {
	case st.Code() == codes.DeadlineExceeded || ctx.Err() != nil:
		return "timeout after " + timeout.String()
	case st.Code() == codes.Unavailable && dialErr != nil:
		return describe(ctx, dialErr, timeout)
	}
	msg := st.Message()
	// The transport wraps a failed handshake; said as the tls monitor
	// says it.
	if _, cause, ok := strings.Cut(msg, "authentication handshake failed: "); ok {
		cause = strings.TrimPrefix(cause, "tls: failed to verify certificate: ")
		return "TLS: " + strings.TrimRight(cause, `"`)
	}
	return "gRPC " + st.Code().String() + ": " + msg
}
