package healthcheck

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

// testCA issues certificates for TLS origins in tests.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "glb test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(3650 * day),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// leaf issues a certificate for name and 127.0.0.1 that expires in
// validFor (negative: expired that long ago).
func (ca *testCA) leaf(t *testing.T, name string, validFor time.Duration) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	notAfter := time.Now().Add(validFor)
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: name},
		DNSNames: []string{name}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore: time.Now().Add(min(validFor, 0) - 2*day), NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der, ca.cert.Raw}, PrivateKey: key}
}

// tlsOrigin is a real TLS server on 127.0.0.1 that completes handshakes
// with cert and then closes; it returns its address and the SNI names
// it was asked for.
func tlsOrigin(t *testing.T, cert tls.Certificate) (string, <-chan string) {
	t.Helper()
	sni := make(chan string, 16)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{cert},
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			select {
			case sni <- h.ServerName:
			default:
			}
			return nil, nil
		},
	})
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
			go func() {
				defer c.Close()
				_ = c.(*tls.Conn).Handshake()
			}()
		}
	}()
	return ln.Addr().String(), sni
}

func tlsMonitor(serverName string, minDays int, insecure bool) pools.Monitor {
	m := monitor(pools.MonitorTLS)
	m.ServerName, m.MinDaysValid, m.AllowInsecure = serverName, minDays, insecure
	return m
}

// probeTLS checks addr under m, trusting ca's roots as the system's.
func probeTLS(t *testing.T, addr string, m pools.Monitor, ca *testCA) result {
	t.Helper()
	tg := targetFor(t, addr, m, pools.Origin{})
	p := newProber(tg, newClients(none)).(*tlsProber)
	if ca != nil {
		p.config.RootCAs = ca.pool
	}
	return check(t.Context(), p, tg.retries)
}

func TestTLSDaysLeft(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t)
	// Five days and an hour: five whole days left.
	addr, sni := tlsOrigin(t, ca.leaf(t, "origin.test", 5*day+time.Hour))
	cases := []struct {
		name    string
		m       pools.Monitor
		healthy bool
		reason  string
	}{
		{"more days than the minimum", tlsMonitor("origin.test", 3, false), true, "certificate valid for 5 more days"},
		{"exactly the minimum", tlsMonitor("origin.test", 5, false), true, "certificate valid for 5 more days"},
		{"within the minimum", tlsMonitor("origin.test", 6, false), false, "certificate expires in 5 days, under min_days_valid 6"},
		{"no minimum, by IP", tlsMonitor("", 0, false), true, "certificate valid for 5 more days"},
		{"name not on the certificate", tlsMonitor("other.test", 0, false), false,
			"TLS: x509: certificate is valid for origin.test, not other.test"},
	}
	for _, c := range cases {
		r := probeTLS(t, addr, c.m, ca)
		if r.healthy != c.healthy || r.reason != c.reason {
			t.Errorf("%s: healthy=%v reason=%q, want healthy=%v reason=%q", c.name, r.healthy, r.reason, c.healthy, c.reason)
		}
		if r.healthy && r.rtt <= 0 {
			t.Errorf("%s: rtt %v", c.name, r.rtt)
		}
		if got := <-sni; c.m.ServerName != "" && got != c.m.ServerName {
			t.Errorf("%s: SNI %q, want %q", c.name, got, c.m.ServerName)
		}
	}
}

// Without the CA among the roots the chain does not verify, unless the
// monitor allows an insecure origin; the days still count then.
func TestTLSVerifies(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t)
	addr, _ := tlsOrigin(t, ca.leaf(t, "origin.test", 30*day+time.Hour))
	if r := probeTLS(t, addr, tlsMonitor("origin.test", 0, false), nil); r.healthy ||
		r.reason != "TLS: x509: certificate signed by unknown authority" {
		t.Errorf("unknown CA: healthy=%v reason=%q", r.healthy, r.reason)
	}
	if r := probeTLS(t, addr, tlsMonitor("origin.test", 31, true), nil); r.healthy ||
		r.reason != "certificate expires in 30 days, under min_days_valid 31" {
		t.Errorf("insecure, 31 days: healthy=%v reason=%q", r.healthy, r.reason)
	}
}

func TestTLSExpired(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t)
	addr, _ := tlsOrigin(t, ca.leaf(t, "origin.test", -3*day-time.Hour))
	r := probeTLS(t, addr, tlsMonitor("origin.test", 0, false), ca)
	if r.healthy || !strings.HasPrefix(r.reason, "TLS: x509: certificate has expired") {
		t.Errorf("verified: healthy=%v reason=%q", r.healthy, r.reason)
	}
	r = probeTLS(t, addr, tlsMonitor("origin.test", 0, true), ca)
	if r.healthy || !strings.HasPrefix(r.reason, "certificate expired 3 days ago") {
		t.Errorf("insecure: healthy=%v reason=%q", r.healthy, r.reason)
	}
}

func TestTLSNotTLS(t *testing.T) {
	t.Parallel()
	srv := serve(t, &sequence{codes: []int{200}})
	r := probeTLS(t, srv.Listener.Addr().String(), tlsMonitor("", 0, true), nil)
	if r.healthy || r.reason != "TLS handshake: origin did not answer with TLS" {
		t.Errorf("healthy=%v reason=%q", r.healthy, r.reason)
	}
	wantProbe(t, closedPort(t), tlsMonitor("", 0, true), false, "connection refused")
}
