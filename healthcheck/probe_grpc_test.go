package healthcheck

import (
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// grpcOrigin is a real grpc-go server with the standard health service on
// 127.0.0.1, over TLS when cert is not nil.
func grpcOrigin(t *testing.T, cert *tls.Certificate) (string, *health.Server) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var opts []grpc.ServerOption
	if cert != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{*cert}})))
	}
	srv := grpc.NewServer(opts...)
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return ln.Addr().String(), hs
}

func grpcMonitor(service string, useTLS bool, serverName string) pools.Monitor {
	m := monitor(pools.MonitorGRPC)
	m.Service, m.TLS, m.ServerName = service, useTLS, serverName
	return m
}

// probeGRPC checks addr under m, trusting ca's roots when not nil.
func probeGRPC(t *testing.T, addr string, m pools.Monitor, ca *testCA) result {
	t.Helper()
	tg := targetFor(t, addr, m, pools.Origin{})
	p := newProber(tg, newClients(none)).(*grpcProber)
	if ca != nil {
		p.config.RootCAs = ca.pool
	}
	return check(t.Context(), p, tg.retries)
}

// The health server's word for the service decides: SERVING is up,
// NOT_SERVING and an unknown service are down with what the server said.
func TestGRPCHealth(t *testing.T) {
	t.Parallel()
	addr, hs := grpcOrigin(t, nil)
	hs.SetServingStatus("pkg.Echo", healthpb.HealthCheckResponse_SERVING)
	want := func(m pools.Monitor, healthy bool, reason string) {
		t.Helper()
		r := probeGRPC(t, addr, m, nil)
		if r.healthy != healthy || r.reason != reason {
			t.Errorf("service %q: healthy=%v reason=%q, want healthy=%v reason=%q", m.Service, r.healthy, r.reason, healthy, reason)
		}
		if r.healthy && r.rtt <= 0 {
			t.Errorf("service %q: rtt %v", m.Service, r.rtt)
		}
	}
	want(grpcMonitor("pkg.Echo", false, ""), true, "")
	want(grpcMonitor("", false, ""), true, "") // the server as a whole
	want(grpcMonitor("pkg.Other", false, ""), false, "gRPC NotFound: unknown service")
	hs.SetServingStatus("pkg.Echo", healthpb.HealthCheckResponse_NOT_SERVING)
	want(grpcMonitor("pkg.Echo", false, ""), false, "gRPC health: NOT_SERVING")
	hs.SetServingStatus("pkg.Echo", healthpb.HealthCheckResponse_SERVING)
	want(grpcMonitor("pkg.Echo", false, ""), true, "")
}

func TestGRPCRefusedAndTimeout(t *testing.T) {
	t.Parallel()
	wantProbe(t, closedPort(t), grpcMonitor("", false, ""), false, "connection refused")

	// A listener that accepts and never speaks HTTP/2.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}()
	m := grpcMonitor("", false, "")
	m.Timeout = 2 // 200 ms in test units
	start := time.Now()
	r := probeOnce(t, targetFor(t, ln.Addr().String(), m, pools.Origin{}), none)
	if r.healthy || r.reason != "timeout after 200ms" {
		t.Errorf("silent server: healthy=%v reason=%q", r.healthy, r.reason)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("silent server: the check took %v, past its timeout", took)
	}
}

// Over TLS the certificate is verified for server_name against the
// roots: the test's CA verifies, none fails unless allow_insecure.
func TestGRPCOverTLS(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t)
	cert := ca.leaf(t, "api.origin.test", 30*day)
	addr, hs := grpcOrigin(t, &cert)
	hs.SetServingStatus("pkg.Echo", healthpb.HealthCheckResponse_SERVING)
	if r := probeGRPC(t, addr, grpcMonitor("pkg.Echo", true, "api.origin.test"), ca); !r.healthy || r.rtt <= 0 {
		t.Errorf("verified: healthy=%v reason=%q rtt=%v", r.healthy, r.reason, r.rtt)
	}
	if r := probeGRPC(t, addr, grpcMonitor("pkg.Echo", true, "other.test"), ca); r.healthy ||
		r.reason != "TLS: x509: certificate is valid for api.origin.test, not other.test" {
		t.Errorf("wrong name: healthy=%v reason=%q", r.healthy, r.reason)
	}
	if r := probeGRPC(t, addr, grpcMonitor("pkg.Echo", true, "api.origin.test"), nil); r.healthy ||
		r.reason != "TLS: x509: certificate signed by unknown authority" {
		t.Errorf("unknown CA: healthy=%v reason=%q", r.healthy, r.reason)
	}
	insecure := grpcMonitor("pkg.Echo", true, "")
	insecure.AllowInsecure = true
	if r := probeGRPC(t, addr, insecure, nil); !r.healthy {
		t.Errorf("allow_insecure: healthy=%v reason=%q", r.healthy, r.reason)
	}
	// In the clear against a TLS server: down.
	if r := probeGRPC(t, addr, grpcMonitor("pkg.Echo", false, ""), nil); r.healthy {
		t.Errorf("plaintext against TLS: healthy")
	}
}
