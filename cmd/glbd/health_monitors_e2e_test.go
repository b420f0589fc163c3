package main

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/glb-dns/glb/internal/testnode"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// knotOrigin is a real DNS server (Knot) on one loopback address, serving
// origin.test, that the test stops and starts again on the same address.
type knotOrigin struct {
	t    *testing.T
	ip   string
	port int
	dir  string
	cmd  *exec.Cmd
	logs *bytes.Buffer
}

// needKnot skips without knotd outside CI and fails in CI, where
// scripts/install-deps.sh installs it.
func needKnot(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("knotd")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("knotd is required in CI (Debian: knot)")
		}
		t.Skip("knotd not installed (Debian: knot)")
	}
	return p
}

// sharedUDPPort is a port free for UDP and TCP on every one of ips a
// moment ago, for servers (knotd) that cannot be told to pick one.
func sharedUDPPort(t *testing.T, ips ...string) int {
	t.Helper()
	for range 20 {
		lns := testnode.SharedPort(t, ips...)
		_, p, _ := net.SplitHostPort(lns[0].Addr().String())
		ok := true
		var pcs []net.PacketConn
		for _, ip := range ips {
			pc, err := net.ListenPacket("udp", net.JoinHostPort(ip, p))
			if err != nil {
				ok = false
				break
			}
			pcs = append(pcs, pc)
		}
		for _, ln := range lns {
			ln.Close()
		}
		for _, pc := range pcs {
			pc.Close()
		}
		if ok {
			n, _ := strconv.Atoi(p)
			return n
		}
	}
	t.Fatalf("no port free for UDP and TCP on all of %v", ips)
	return 0
}

// startKnotOrigins starts one knotd per ip, all on one port.
func startKnotOrigins(t *testing.T, ips ...string) []*knotOrigin {
	t.Helper()
	needKnot(t)
	port := sharedUDPPort(t, ips...)
	out := make([]*knotOrigin, len(ips))
	for i, ip := range ips {
		k := &knotOrigin{t: t, ip: ip, port: port, dir: t.TempDir()}
		zone := "$ORIGIN origin.test.\n$TTL 300\n@ SOA ns1 hostmaster 1 3600 600 86400 300\n@ NS ns1\nns1 A 127.0.0.1\nwww A 192.0.2.10\n"
		if err := os.WriteFile(filepath.Join(k.dir, "origin.test.zone"), []byte(zone), 0o644); err != nil {
			t.Fatal(err)
		}
		conf := fmt.Sprintf("server:\n    listen: %s@%d\n    rundir: %s\n\nlog:\n  - target: stderr\n    any: info\n\n"+
			"database:\n    storage: %s\n\ncontrol:\n    listen: %s\n\nzone:\n  - domain: origin.test\n    file: %s\n",
			ip, port, k.dir, k.dir, filepath.Join(k.dir, "knot.sock"), filepath.Join(k.dir, "origin.test.zone"))
		if err := os.WriteFile(filepath.Join(k.dir, "knot.conf"), []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		k.start()
		t.Cleanup(k.stop)
		out[i] = k
	}
	return out
}

func (k *knotOrigin) addr() string { return net.JoinHostPort(k.ip, strconv.Itoa(k.port)) }

// start runs knotd and returns once it answers www.origin.test.
func (k *knotOrigin) start() {
	k.t.Helper()
	k.logs = &bytes.Buffer{}
	k.cmd = exec.Command(needKnot(k.t), "-c", filepath.Join(k.dir, "knot.conf"))
	k.cmd.Stdout, k.cmd.Stderr = k.logs, k.logs
	if err := k.cmd.Start(); err != nil {
		k.t.Fatal(err)
	}
	eventually(k.t, 30*time.Second, "knotd on "+k.addr()+" answers", func() (bool, string) {
		got, status := dig(k.t, k.addr(), "www.origin.test", "A", "+norec")
		return status == "NOERROR" && len(got) == 1 && got[0] == "192.0.2.10", status
	})
}

// stop kills knotd: its port answers with ICMP port unreachable from now.
func (k *knotOrigin) stop() {
	if k.cmd == nil {
		return
	}
	_ = k.cmd.Process.Kill()
	_ = k.cmd.Wait()
	if k.t.Failed() {
		k.t.Logf("knotd %s log:\n%s", k.addr(), k.logs.String())
	}
	k.cmd = nil
}

// dnsQuery is the wire form of a question for name/A without recursion.
func dnsQuery(name string) []byte {
	q := []byte{0x12, 0x34, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}
	for _, l := range strings.Split(strings.TrimSuffix(name, "."), ".") {
		q = append(q, byte(len(l)))
		q = append(q, l...)
	}
	return append(q, 0, 0, 1, 0, 1)
}

// healthOutAndBack runs the acceptance script for one monitor: three
// origins checked healthy and answered, one stopped leaves the answer
// within the thresholds, and started again comes back within them.
// stop and start act on origin b; reason is what its check must say
// while down.
func healthOutAndBack(t *testing.T, g *glbd, monitor map[string]any, ips []string, stop, start func(), reason string) {
	t.Helper()
	zone := zoneFor(t, g)
	for k, v := range map[string]any{"interval": 1, "timeout": 1, "retries": 0, "consecutive_down": 2, "consecutive_up": 2} {
		monitor[k] = v
	}
	mon := g.must("POST", "/api/v1/monitors", monitor)["id"].(string)
	pool := g.must("POST", "/api/v1/pools", map[string]any{"name": "svc", "monitor": mon, "origins": []map[string]any{
		{"name": "a", "address": ips[0]}, {"name": "b", "address": ips[1]}, {"name": "c", "address": ips[2]},
	}})["id"].(string)
	g.must("POST", "/api/v1/load_balancers", map[string]any{
		"zone": zone, "name": "www.glb.example.com", "default_pools": []any{pool}, "fallback_pool": pool, "answers": 0,
	})
	eventually(t, 15*time.Second, "every origin checked healthy", func() (bool, string) {
		ph := poolHealth(t, g, pool)
		for _, o := range ph.Origins {
			if len(o.Checks) == 0 || !o.Checks[0].Healthy || o.Healthy == nil || !*o.Healthy {
				return false, describeHealth(ph)
			}
		}
		return true, ""
	})
	answerWithin(t, g, 10*time.Second, "all three answered", ips...)
	for _, o := range poolHealth(t, g, pool).Origins {
		if o.Checks[0].RTTMs <= 0 {
			t.Errorf("origin %s's check reports no RTT: %+v", o.Name, o.Checks[0])
		}
	}

	// interval × consecutive_down + timeout, and a second and a half for
	// the snapshot on a loaded machine. A monitor whose failure is its
	// timeout (icmp against a host that drops echoes) comes nearest: its
	// first failing check may start up to an interval after the stop
	// and each takes the whole timeout (3.3 s seen at a load of 26).
	const interval, timeout, down, up = time.Second, time.Second, 2, 2
	downBound := interval*down + timeout + 1500*time.Millisecond
	stop()
	tookDown := answerWithin(t, g, downBound, "stopped origin b leaves the answer", ips[0], ips[2])
	t.Logf("%s: origin stopped → out of DNS in %v (bound %v)", monitor["type"], tookDown.Round(time.Millisecond), downBound)
	ph := poolHealth(t, g, pool)
	if b := originOf(ph, "b"); b.Healthy == nil || *b.Healthy || !strings.Contains(b.Reason, reason) {
		t.Errorf("health of stopped origin b: %s; want agreed unhealthy, reason containing %q", describeHealth(ph), reason)
	}

	start()
	upBound := interval*up + time.Second
	tookUp := answerWithin(t, g, upBound, "restarted origin b is answered again", ips...)
	t.Logf("%s: origin restarted → back in DNS in %v (bound %v)", monitor["type"], tookUp.Round(time.Millisecond), upBound)
}

// TestHealthDNSMonitorKnot: a dns monitor asking Knot for www.origin.test
// over UDP takes an origin whose knotd stops out of glb's answer and
// brings it back when knotd serves again.
func TestHealthDNSMonitorKnot(t *testing.T) {
	t.Parallel()
	ips := []string{"127.0.7.1", "127.0.7.2", "127.0.7.3"}
	ks := startKnotOrigins(t, ips...)
	g := startGlbd(t, "")
	healthOutAndBack(t, g, map[string]any{"type": "dns", "port": ks[0].port, "query_name": "www.origin.test",
		"query_type": "A", "expected_rcode": "NOERROR", "expected_answer": "192.0.2.10"}, ips, ks[1].stop, ks[1].start,
		"connection refused")
}

// TestHealthDNSMonitorOverTCP: the same over TCP.
func TestHealthDNSMonitorOverTCP(t *testing.T) {
	t.Parallel()
	ips := []string{"127.0.7.11", "127.0.7.12", "127.0.7.13"}
	ks := startKnotOrigins(t, ips...)
	g := startGlbd(t, "")
	healthOutAndBack(t, g, map[string]any{"type": "dns", "protocol": "tcp", "port": ks[0].port, "query_name": "www.origin.test",
		"query_type": "A", "expected_answer": "192.0.2.10"}, ips, ks[1].stop, ks[1].start, "connection refused")
}

// TestHealthUDPMonitorKnot: a udp monitor sends a DNS question as hex and
// expects the answer's address bytes in the reply.
func TestHealthUDPMonitorKnot(t *testing.T) {
	t.Parallel()
	ips := []string{"127.0.7.21", "127.0.7.22", "127.0.7.23"}
	ks := startKnotOrigins(t, ips...)
	g := startGlbd(t, "")
	healthOutAndBack(t, g, map[string]any{"type": "udp", "port": ks[0].port, "payload_encoding": "hex",
		"send": hex.EncodeToString(dnsQuery("www.origin.test")), "expect": "c000020a"}, ips, ks[1].stop, ks[1].start,
		"connection refused")
}

// certAuthority makes a CA and the certificates of TLS origins.
type certAuthority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newCertAuthority(t *testing.T) *certAuthority {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "glb e2e CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(10 * 365 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &certAuthority{cert: cert, key: key}
}

// leaf is a certificate for name that expires in days days and an hour.
func (ca *certAuthority) leaf(t *testing.T, name string, days int) *tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-24 * time.Hour), NotAfter: time.Now().Add(time.Duration(days)*24*time.Hour + time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Certificate{Certificate: [][]byte{der, ca.cert.Raw}, PrivateKey: key}
}

// TestHealthTLSMonitorCertificateDays: TLS origins whose certificates a
// CA made in the test signs, verified by glbd (the CA is its only root).
// Origin b's certificate is swapped for one expiring within
// min_days_valid: b leaves the answer; renewed, it comes back. The days
// left show in pool health.
func TestHealthTLSMonitorCertificateDays(t *testing.T) {
	// Not parallel: SSL_CERT_FILE is the process environment glbd
	// inherits.
	ca := newCertAuthority(t)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSL_CERT_FILE", caFile)
	t.Setenv("SSL_CERT_DIR", t.TempDir())

	ips := []string{"127.0.8.1", "127.0.8.2", "127.0.8.3"}
	fresh, expiring := ca.leaf(t, "svc.origin.test", 90), ca.leaf(t, "svc.origin.test", 2)
	certs := make([]atomic.Pointer[tls.Certificate], len(ips))
	var port int
	for i, ln := range testnode.SharedPort(t, ips...) {
		certs[i].Store(fresh)
		cur := &certs[i]
		tl := tls.NewListener(ln, &tls.Config{GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return cur.Load(), nil
		}})
		t.Cleanup(func() { tl.Close() })
		go func() {
			for {
				c, err := tl.Accept()
				if err != nil {
					return
				}
				go func() { defer c.Close(); _ = c.(*tls.Conn).Handshake() }()
			}
		}()
		_, p, _ := net.SplitHostPort(ln.Addr().String())
		port, _ = strconv.Atoi(p)
	}
	g := startGlbd(t, "")
	healthOutAndBack(t, g, map[string]any{"type": "tls", "port": port, "server_name": "svc.origin.test", "min_days_valid": 7},
		ips, func() { certs[1].Store(expiring) }, func() { certs[1].Store(fresh) },
		"certificate expires in 2 days, under min_days_valid 7")

	var pool string
	var out struct {
		Result []map[string]any `json:"result"`
	}
	g.call("GET", "/api/v1/pools", nil, &out)
	pool = out.Result[0]["id"].(string)
	eventually(t, 10*time.Second, "days left shown in pool health", func() (bool, string) {
		ph := poolHealth(t, g, pool)
		for _, o := range ph.Origins {
			if len(o.Checks) == 0 || o.Checks[0].Reason != "certificate valid for 90 more days" ||
				o.Note != "certificate valid for 90 more days" {
				return false, describeHealth(ph) + fmt.Sprintf(" agreed note of %s: %q", o.Name, o.Note)
			}
		}
		return true, ""
	})
	// Explain shows the days left of each healthy origin it may answer.
	var lbs struct {
		Result []map[string]any `json:"result"`
	}
	g.call("GET", "/api/v1/load_balancers", nil, &lbs)
	var ex struct {
		Result struct {
			Decision struct {
				Origins struct {
					Eligible []struct{ Name, Note string } `json:"eligible"`
				} `json:"origin_steering"`
			} `json:"decision"`
		} `json:"result"`
	}
	if code := g.call("GET", "/api/v1/load_balancers/"+lbs.Result[0]["id"].(string)+"/explain?client=192.0.2.9", nil, &ex); code != 200 {
		t.Fatalf("explain: %d", code)
	}
	if el := ex.Result.Decision.Origins.Eligible; len(el) != 3 {
		t.Errorf("explain: eligible %+v, want a, b and c", el)
	}
	for _, o := range ex.Result.Decision.Origins.Eligible {
		if o.Note != "certificate valid for 90 more days" {
			t.Errorf("explain: origin %s's note %q, want the days left", o.Name, o.Note)
		}
	}
}

// TestMonitorTypesRefusedNamingField: a monitor of a new type missing or
// misspelling a field of its type is a 400 naming that field.
func TestMonitorTypesRefusedNamingField(t *testing.T) {
	g := startParallel(t)
	for _, c := range []struct {
		body map[string]any
		want []string
	}{
		{map[string]any{"type": "udp", "port": 7}, []string{"send"}},
		{map[string]any{"type": "udp", "port": 7, "send": "zz", "payload_encoding": "hex"}, []string{"send"}},
		{map[string]any{"type": "dns"}, []string{"query_name", "query_type"}},
		{map[string]any{"type": "dns", "query_name": "www.example.com", "query_type": "A", "protocol": "quic", "expected_rcode": "FINE"},
			[]string{"expected_rcode", "protocol"}},
		{map[string]any{"type": "tls", "min_days_valid": -1, "server_name": "bad..name"}, []string{"min_days_valid", "server_name"}},
		{map[string]any{"type": "smtp", "server_name": "bad..name"}, []string{"server_name"}},
	} {
		var out struct {
			Errors []struct{ Path, Message string } `json:"errors"`
		}
		if status := g.call("POST", "/api/v1/monitors", c.body, &out); status != 400 {
			t.Errorf("%v: status %d, want 400", c.body, status)
			continue
		}
		var got []string
		for _, e := range out.Errors {
			got = append(got, e.Path)
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%v: 400 naming %v (%+v), want %v", c.body, got, out.Errors, c.want)
		}
	}
}

// TestHealthSMTPMonitor: small real SMTP servers on one port; origin b
// starts answering 421 (too busy) and leaves the answer, then greets
// with 220 again and comes back.
func TestHealthSMTPMonitor(t *testing.T) {
	t.Parallel()
	ips := []string{"127.0.9.1", "127.0.9.2", "127.0.9.3"}
	banners := make([]atomic.Pointer[string], len(ips))
	ready, busy := "220 mx.origin.test ESMTP", "421 4.3.2 mx.origin.test too busy"
	var port int
	for i, ln := range testnode.SharedPort(t, ips...) {
		banners[i].Store(&ready)
		banner := &banners[i]
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					_ = c.SetDeadline(time.Now().Add(30 * time.Second))
					b := *banner.Load()
					fmt.Fprintf(c, "%s\r\n", b)
					if !strings.HasPrefix(b, "220") {
						return
					}
					r := bufio.NewReader(c)
					for {
						line, err := r.ReadString('\n')
						if err != nil {
							return
						}
						switch strings.ToUpper(strings.Fields(line + " x")[0]) {
						case "EHLO":
							fmt.Fprintf(c, "250-mx.origin.test\r\n250 8BITMIME\r\n")
						case "QUIT":
							fmt.Fprintf(c, "221 bye\r\n")
							return
						default:
							fmt.Fprintf(c, "502 not implemented\r\n")
						}
					}
				}()
			}
		}()
		_, p, _ := net.SplitHostPort(ln.Addr().String())
		port, _ = strconv.Atoi(p)
	}
	g := startGlbd(t, "")
	healthOutAndBack(t, g, map[string]any{"type": "smtp", "port": port}, ips,
		func() { banners[1].Store(&busy) }, func() { banners[1].Store(&ready) },
		"SMTP 421 at banner: 4.3.2 mx.origin.test too busy")
}

// grpcOrigins serves the standard gRPC health service with grpc-go on one
// port of each of ips (over TLS with cert when not nil) and returns the
// port and each origin's health server.
func grpcOrigins(t *testing.T, cert *tls.Certificate, ips ...string) (int, []*health.Server) {
	t.Helper()
	var (
		port int
		hss  []*health.Server
	)
	for _, ln := range testnode.SharedPort(t, ips...) {
		var opts []grpc.ServerOption
		if cert != nil {
			opts = append(opts, grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{*cert}})))
		}
		srv := grpc.NewServer(opts...)
		hs := health.NewServer()
		hs.SetServingStatus("shop.Cart", healthpb.HealthCheckResponse_SERVING)
		healthpb.RegisterHealthServer(srv, hs)
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(srv.Stop)
		hss = append(hss, hs)
		_, p, _ := net.SplitHostPort(ln.Addr().String())
		port, _ = strconv.Atoi(p)
	}
	return port, hss
}

// TestHealthGRPCMonitor: grpc-go health servers; origin b's service turns
// NOT_SERVING and leaves the answer, SERVING again and comes back.
func TestHealthGRPCMonitor(t *testing.T) {
	t.Parallel()
	ips := []string{"127.0.9.11", "127.0.9.12", "127.0.9.13"}
	port, hss := grpcOrigins(t, nil, ips...)
	g := startGlbd(t, "")
	healthOutAndBack(t, g, map[string]any{"type": "grpc", "port": port, "service": "shop.Cart"}, ips,
		func() { hss[1].SetServingStatus("shop.Cart", healthpb.HealthCheckResponse_NOT_SERVING) },
		func() { hss[1].SetServingStatus("shop.Cart", healthpb.HealthCheckResponse_SERVING) },
		"gRPC health: NOT_SERVING")
}

// TestHealthGRPCMonitorTLS: the same over TLS, the certificates signed by
// a CA made in the test and glbd's only root.
func TestHealthGRPCMonitorTLS(t *testing.T) {
	// Not parallel: SSL_CERT_FILE is the process environment glbd
	// inherits.
	ca := newCertAuthority(t)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSL_CERT_FILE", caFile)
	t.Setenv("SSL_CERT_DIR", t.TempDir())
	ips := []string{"127.0.9.21", "127.0.9.22", "127.0.9.23"}
	port, hss := grpcOrigins(t, ca.leaf(t, "cart.origin.test", 90), ips...)
	g := startGlbd(t, "")
	healthOutAndBack(t, g, map[string]any{"type": "grpc", "port": port, "service": "shop.Cart", "tls": true,
		"server_name": "cart.origin.test"}, ips,
		func() { hss[1].SetServingStatus("shop.Cart", healthpb.HealthCheckResponse_NOT_SERVING) },
		func() { hss[1].SetServingStatus("shop.Cart", healthpb.HealthCheckResponse_SERVING) },
		"gRPC health: NOT_SERVING")
}

// TestHealthICMPMonitor: three namespace hosts behind a veth answer
// glbd's echo requests; an nftables drop in the host makes b stop
// answering and leave the answer, its removal brings b back. Needs root
// (a network namespace and a veth link).
func TestHealthICMPMonitor(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: makes a network namespace and a veth link (run as root in CI)")
	}
	t.Parallel()
	ns := fmt.Sprintf("glbe2e-icmp-%d", os.Getpid())
	link := fmt.Sprintf("gi%d", os.Getpid()%100000)
	sh := func(stdin string, args ...string) {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Stdin = strings.NewReader(stdin)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	sh("", "ip", "netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	sh("", "ip", "link", "add", link, "type", "veth", "peer", "name", "vh", "netns", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", link).Run() })
	sh("", "ip", "addr", "add", "198.18.243.1/29", "dev", link)
	sh("", "ip", "link", "set", link, "up")
	ips := []string{"198.18.243.2", "198.18.243.3", "198.18.243.4"}
	for _, ip := range ips {
		sh("", "ip", "-n", ns, "addr", "add", ip+"/29", "dev", "vh")
	}
	sh("", "ip", "-n", ns, "link", "set", "vh", "up")
	sh("", "ip", "-n", ns, "link", "set", "lo", "up")

	g := startGlbd(t, "")
	healthOutAndBack(t, g, map[string]any{"type": "icmp", "count": 3}, ips,
		func() {
			sh("table inet glbe2e { chain in { type filter hook input priority 0; ip daddr 198.18.243.3 icmp type echo-request drop; }; }\n",
				"ip", "netns", "exec", ns, "nft", "-f", "-")
		},
		func() { sh("", "ip", "netns", "exec", ns, "nft", "delete", "table", "inet", "glbe2e") },
		"no echo reply in 1s (3 sent)")
}
