package main

// The servers of -types: one of each kind on each of the 64 origin
// addresses, every kind on a port of its own, each counting the probes
// it served. icmp has none: the kernel answers echoes to 127.2.0.x, so
// its probes are counted from the checker's results alone.

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/glb-dns/glb/pools"
	"github.com/miekg/dns"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// kind is one monitor type under test: its port and the probes its
// servers saw.
type kind struct {
	typ    pools.MonitorType
	port   int
	probes atomic.Int64
}

// parseTypes reads -types: a comma-separated list of monitor types, or
// "mixed" for every type the checker probes (not feed: its word comes
// from outside).
func parseTypes(s string) ([]*kind, error) {
	var names []string
	if s == "mixed" {
		for _, t := range pools.MonitorTypes {
			if t != pools.MonitorFeed { // fed from outside, never probed
				names = append(names, string(t))
			}
		}
	} else {
		names = strings.Split(s, ",")
	}
	var ks []*kind
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		known := false
		for _, t := range pools.MonitorTypes {
			known = known || string(t) == n
		}
		if !known || n == string(pools.MonitorFeed) {
			return nil, fmt.Errorf("-types: %q is not a monitor type the checker probes (%v, or mixed)", n, pools.MonitorTypes)
		}
		if !seen[n] {
			seen[n] = true
			ks = append(ks, &kind{typ: pools.MonitorType(n)})
		}
	}
	return ks, nil
}

// serve starts k's servers on the 64 origin addresses. http is served
// by run's own listeners.
func (k *kind) serve(cert tls.Certificate) error {
	port := "0"
	for j := range 64 {
		addr := net.JoinHostPort(fmt.Sprintf("127.2.0.%d", j+1), port)
		var err error
		switch k.typ {
		case pools.MonitorTCP:
			err = k.accept(addr, func(c net.Conn) {})
		case pools.MonitorTLS:
			err = k.accept(addr, func(c net.Conn) { _ = tls.Server(c, &tls.Config{Certificates: []tls.Certificate{cert}}).Handshake() })
		case pools.MonitorSMTP:
			err = k.accept(addr, smtpSession)
		case pools.MonitorUDP:
			err = k.echo(addr)
		case pools.MonitorDNS:
			err = k.dns(addr)
		case pools.MonitorGRPC:
			err = k.grpc(addr)
		case pools.MonitorHTTPS:
			err = k.accept(addr, func(c net.Conn) { httpsOnce(c, cert) })
		case pools.MonitorHTTP, pools.MonitorICMP:
			return nil
		default:
			return fmt.Errorf("no bench server for %s", k.typ)
		}
		if err != nil {
			return fmt.Errorf("%s server on %s: %w", k.typ, addr, err)
		}
		port = strconv.Itoa(k.port)
	}
	return nil
}

// accept serves each TCP connection with session, counting it.
func (k *kind) accept(addr string, session func(net.Conn)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	k.port = ln.Addr().(*net.TCPAddr).Port
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			k.probes.Add(1)
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				session(c)
			}()
		}
	}()
	return nil
}

// echo answers "ping" with "pong".
func (k *kind) echo(addr string) error {
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return err
	}
	k.port = pc.LocalAddr().(*net.UDPAddr).Port
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if string(buf[:n]) == "ping" {
				k.probes.Add(1)
				_, _ = pc.WriteTo([]byte("pong"), from)
			}
		}
	}()
	return nil
}

// dns answers every A question with 192.0.2.1.
func (k *kind) dns(addr string) error {
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return err
	}
	k.port = pc.LocalAddr().(*net.UDPAddr).Port
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		k.probes.Add(1)
		m := new(dns.Msg)
		m.SetReply(q)
		m.Authoritative = true
		if len(q.Question) == 1 && q.Question[0].Qtype == dns.TypeA {
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60},
				A: net.IPv4(192, 0, 2, 1)})
		}
		_ = w.WriteMsg(m)
	})}
	go func() { _ = srv.ActivateAndServe() }()
	return nil
}

// grpc serves grpc.health.v1 as SERVING.
func (k *kind) grpc(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	k.port = ln.Addr().(*net.TCPAddr).Port
	srv := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		k.probes.Add(1)
		return h(ctx, req)
	}))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go func() { _ = srv.Serve(ln) }()
	return nil
}

// smtpSession greets, answers EHLO and says goodbye to QUIT.
func smtpSession(c net.Conn) {
	r := bufio.NewReader(c)
	_, _ = c.Write([]byte("220 bench ESMTP\r\n"))
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		switch verb := strings.ToUpper(strings.Fields(line + " x")[0]); verb {
		case "EHLO", "HELO":
			_, _ = c.Write([]byte("250 bench\r\n"))
		case "QUIT":
			_, _ = c.Write([]byte("221 bye\r\n"))
			return
		default:
			_, _ = c.Write([]byte("502 not here\r\n"))
		}
	}
}

// httpsOnce answers one request over TLS with 200.
func httpsOnce(c net.Conn, cert tls.Certificate) {
	t := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{cert}})
	if t.Handshake() != nil {
		return
	}
	r := bufio.NewReader(t)
	for {
		line, err := r.ReadString('\n')
		if err != nil || line == "\r\n" {
			break
		}
	}
	_, _ = t.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
}

// monitorFor is the monitor of k's pools.
func (k *kind) monitorFor(httpPort, interval, timeout int) pools.Monitor {
	m := pools.DefaultMonitor()
	m.ID, m.Type, m.Port, m.Interval, m.Timeout, m.Retries = "m-"+string(k.typ), k.typ, k.port, interval, timeout, 0
	switch k.typ {
	case pools.MonitorHTTP:
		m.Port = httpPort
	case pools.MonitorHTTPS, pools.MonitorTLS:
		m.AllowInsecure = true
	case pools.MonitorUDP:
		m.Send, m.Expect = "ping", "pong"
	case pools.MonitorDNS:
		m.QueryName, m.QueryType, m.ExpectedRcode, m.ExpectedAnswer = "bench.test", "A", "NOERROR", "192.0.2.1"
	case pools.MonitorICMP:
		m.Port, m.Count = 0, 1
	}
	return m
}

// selfSigned is the certificate of the TLS servers (the monitors allow
// it insecurely: the bench measures the schedule, not verification).
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bench"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
