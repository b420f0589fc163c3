package healthcheck

import (
	"bufio"
	"crypto/tls"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

// smtpOrigin is a small real SMTP server: banner, EHLO (advertising
// STARTTLS when it has a certificate), STARTTLS, QUIT. banner and
// ehloReply are the replies it gives, changeable while it runs; what it
// saw of each session is sent on seen.
type smtpOrigin struct {
	banner, ehloReply atomic.Pointer[string]
	seen              chan string
}

func startSMTP(t *testing.T, cert *tls.Certificate) (*smtpOrigin, string) {
	t.Helper()
	o := &smtpOrigin{seen: make(chan string, 16)}
	b, e := "220 mx.test ESMTP ready", "250 mx.test"
	o.banner.Store(&b)
	o.ehloReply.Store(&e)
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
			go o.session(c, cert)
		}
	}()
	return o, ln.Addr().String()
}

func (o *smtpOrigin) session(c net.Conn, cert *tls.Certificate) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	var log []string
	defer func() {
		select {
		case o.seen <- strings.Join(log, "|"):
		default:
		}
	}()
	r, w := bufio.NewReader(c), c
	say := func(s string) { _, _ = w.Write([]byte(s + "\r\n")) }
	say(*o.banner.Load())
	if !strings.HasPrefix(*o.banner.Load(), "220") {
		return
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimSpace(line)
		log = append(log, line)
		switch verb := strings.ToUpper(strings.Fields(line + " x")[0]); verb {
		case "EHLO":
			if rep := *o.ehloReply.Load(); strings.HasPrefix(rep, "250") && cert != nil {
				say("250-mx.test")
				say("250 STARTTLS")
			} else {
				say(rep)
			}
		case "STARTTLS":
			if cert == nil {
				say("502 not implemented")
				continue
			}
			say("220 go ahead")
			tc := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{*cert}})
			if err := tc.Handshake(); err != nil {
				log = append(log, "handshake failed")
				return
			}
			log = append(log, "TLS")
			r, w = bufio.NewReader(tc), tc
		case "QUIT":
			say("221 bye")
			return
		default:
			say("502 not implemented")
		}
	}
}

func smtpMonitor(starttls bool, serverName string) pools.Monitor {
	m := monitor(pools.MonitorSMTP)
	m.StartTLS, m.ServerName = starttls, serverName
	return m
}

func TestSMTPProbe(t *testing.T) {
	t.Parallel()
	o, addr := startSMTP(t, nil)
	r := wantProbe(t, addr, smtpMonitor(false, ""), true, "")
	if r.rtt <= 0 {
		t.Errorf("rtt %v", r.rtt)
	}
	if got := <-o.seen; got != "EHLO glb-healthcheck|QUIT" {
		t.Errorf("session %q", got)
	}
	busy := "421 mx.test too busy, try later"
	o.banner.Store(&busy)
	wantProbe(t, addr, smtpMonitor(false, ""), false, "SMTP 421 at banner: mx.test too busy, try later")
	<-o.seen
	// A banner that is not 220, even a 2xx one, is not a mail server ready.
	odd := "250 hello"
	o.banner.Store(&odd)
	wantProbe(t, addr, smtpMonitor(false, ""), false, "SMTP 250 at banner: hello")
	<-o.seen
	ok, refused := "220 mx.test ESMTP", "554 5.7.1 no service for you"
	o.banner.Store(&ok)
	o.ehloReply.Store(&refused)
	wantProbe(t, addr, smtpMonitor(false, ""), false, "SMTP 554 at EHLO: 5.7.1 no service for you")
	wantProbe(t, closedPort(t), smtpMonitor(false, ""), false, "connection refused")
}

func TestSMTPStartTLS(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t)
	cert := ca.leaf(t, "mx.test", 30*day)
	o, addr := startSMTP(t, &cert)
	tg := targetFor(t, addr, smtpMonitor(true, "mx.test"), pools.Origin{})
	p := newProber(tg, newClients(none)).(*smtpProber)
	p.config.RootCAs = ca.pool
	if r := check(t.Context(), p, 0); !r.healthy {
		t.Fatalf("STARTTLS with a trusted certificate: %s", r.reason)
	}
	if got := <-o.seen; got != "EHLO glb-healthcheck|STARTTLS|TLS|EHLO glb-healthcheck|QUIT" {
		t.Errorf("session %q", got)
	}
	// Without the CA the upgrade does not verify.
	wantProbe(t, addr, smtpMonitor(true, "mx.test"), false, "STARTTLS: TLS: x509: certificate signed by unknown authority")
	// A server without STARTTLS refuses it: down.
	_, plain := startSMTP(t, nil)
	wantProbe(t, plain, smtpMonitor(true, "mx.test"), false, "SMTP 502 at STARTTLS: not implemented")
}
