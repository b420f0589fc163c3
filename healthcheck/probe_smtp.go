package healthcheck

import (
	"context"
	"crypto/tls"
	"net"
	"net/netip"
	"net/textproto"
	"strconv"
	"strings"
	"time"
)

// smtpHelo is the name a probe gives in EHLO.
const smtpHelo = "glb-healthcheck"

// smtpProber speaks to a mail server as a client would until it could
// send mail: the 220 banner, EHLO, optionally STARTTLS and EHLO again,
// then QUIT. Any 4xx or 5xx reply is down, with the server's own words.
type smtpProber struct {
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)
	addr     string
	timeout  time.Duration
	starttls bool
	config   *tls.Config
}

func newSMTPProber(t *target, src netip.Addr) prober {
	name := t.serverName
	if name == "" {
		name = t.address
	}
	return &smtpProber{dial: dialer(src), addr: t.hostPort(), timeout: t.timeout, starttls: t.starttls,
		config: &tls.Config{ServerName: name, InsecureSkipVerify: t.insecure}}
}

func (p *smtpProber) attempt(ctx context.Context) result {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	start := time.Now()
	raw, err := p.dial(ctx, "tcp", p.addr)
	if err != nil {
		return result{reason: describe(ctx, err, p.timeout)}
	}
	conn := raw
	defer func() { _ = conn.Close() }()
	if d, ok := ctx.Deadline(); ok {
		_ = raw.SetDeadline(d)
	}
	stop := context.AfterFunc(ctx, func() { _ = raw.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	tc := textproto.NewConn(raw)
	if _, _, err := tc.ReadResponse(220); err != nil {
		return result{reason: smtpReason(ctx, "banner", err, p.timeout)}
	}
	if r := p.ehlo(ctx, tc); r != "" {
		return result{reason: r}
	}
	if p.starttls {
		if _, _, err := cmd(tc, 220, "STARTTLS"); err != nil {
			return result{reason: smtpReason(ctx, "STARTTLS", err, p.timeout)}
		}
		t := tls.Client(raw, p.config)
		conn = t
		if err := t.HandshakeContext(ctx); err != nil {
			return result{reason: "STARTTLS: " + describe(ctx, err, p.timeout)}
		}
		tc = textproto.NewConn(t)
		if r := p.ehlo(ctx, tc); r != "" {
			return result{reason: r}
		}
	}
	rtt := time.Since(start)
	_, _, _ = cmd(tc, 221, "QUIT")
	return result{healthy: true, rtt: rtt}
}

func (p *smtpProber) ehlo(ctx context.Context, tc *textproto.Conn) string {
	if _, _, err := cmd(tc, 250, "EHLO "+smtpHelo); err != nil {
		return smtpReason(ctx, "EHLO", err, p.timeout)
	}
	return ""
}

// cmd sends one command and reads its reply, expecting code.
func cmd(tc *textproto.Conn, code int, line string) (int, string, error) {
	if err := tc.PrintfLine("%s", line); err != nil {
		return 0, "", err
	}
	return tc.ReadResponse(code)
}

// smtpReason is the server's reply when it gave one ("SMTP 421 at EHLO:
// too busy"), else the connection's failure.
func smtpReason(ctx context.Context, step string, err error, timeout time.Duration) string {
	if pe, ok := err.(*textproto.Error); ok {
		msg := strings.ReplaceAll(pe.Msg, "\n", " ")
		return "SMTP " + strconv.Itoa(pe.Code) + " at " + step + ": " + msg
	}
	return step + ": " + describe(ctx, err, timeout)
}
