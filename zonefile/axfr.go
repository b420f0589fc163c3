package zonefile

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/pools"
)

// TSIG is the key that signs a transfer request.
type TSIG struct {
	Name      string `json:"name"`
	Algorithm string `json:"algorithm"`
	Secret    string `json:"secret"`
}

// PullError is a transfer that did not complete; Field names what the
// caller gave that is at fault ("server" or "tsig").
type PullError struct {
	Field string
	Err   error
}

func (e *PullError) Error() string { return e.Err.Error() }
func (e *PullError) Unwrap() error { return e.Err }

// Pull transfers zone apex by AXFR (RFC 5936) from server (host or
// host:port, port 53 by default), connecting with dial, signed with key
// when it is not nil, and reads the records as Parse reads a file: each
// Entry's Line is its position in the transfer (the first record is 1),
// and errors name records ("record 12").
func Pull(ctx context.Context, dial func(ctx context.Context, network, addr string) (net.Conn, error), server, apex string, key *TSIG) (*File, error) {
	if _, _, err := net.SplitHostPort(server); err != nil {
		server = net.JoinHostPort(strings.Trim(server, "[]"), "53")
	}
	zone := pools.CanonicalName(apex)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	c, err := dial(ctx, "tcp", server)
	if err != nil {
		return nil, &PullError{"server", fmt.Errorf("connect to %s: %w", server, err)}
	}
	defer c.Close()
	if d, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(d)
	}
	m := new(dns.Msg)
	m.SetAxfr(dns.Fqdn(zone))
	tr := &dns.Transfer{Conn: &dns.Conn{Conn: c}}
	if key != nil {
		alg := dns.Fqdn(strings.ToLower(key.Algorithm))
		if _, ok := map[string]bool{dns.HmacSHA256: true, dns.HmacSHA512: true, dns.HmacSHA384: true, dns.HmacSHA1: true}[alg]; !ok {
			return nil, &PullError{"tsig", fmt.Errorf("algorithm %q: want hmac-sha256, hmac-sha384, hmac-sha512 or hmac-sha1", key.Algorithm)}
		}
		name := dns.Fqdn(strings.ToLower(key.Name))
		m.SetTsig(name, alg, 300, time.Now().Unix())
		tr.TsigSecret = map[string]string{name: key.Secret}
	}
	ch, err := tr.In(m, server)
	if err != nil {
		return nil, &PullError{"server", fmt.Errorf("AXFR of %s from %s: %w", zone, server, err)}
	}
	f := &File{Unit: "record"}
	var errs []pools.FieldError
	n, soas := 0, 0
	for env := range ch {
		if env.Error != nil {
			field := "server"
			if errors.Is(env.Error, dns.ErrSig) || errors.Is(env.Error, dns.ErrSecret) || errors.Is(env.Error, dns.ErrKey) || errors.Is(env.Error, dns.ErrAuth) ||
				strings.Contains(env.Error.Error(), "NOTAUTH") || strings.Contains(env.Error.Error(), "BADSIG") || strings.Contains(env.Error.Error(), "BADKEY") {
				field = "tsig"
			}
			return nil, &PullError{field, fmt.Errorf("AXFR of %s from %s: %w", zone, server, env.Error)}
		}
		for _, rr := range env.RR {
			n++
			if rr.Header().Rrtype == dns.TypeSOA {
				soas++
				if soas > 1 {
					continue // the closing SOA
				}
			}
			f.add(rr, zone, n, func(msg string) {
				if len(errs) < MaxErrors {
					errs = append(errs, pools.FieldError{Path: "record " + strconv.Itoa(n), Message: msg})
				}
			})
		}
	}
	if soas < 2 {
		return nil, &PullError{"server", fmt.Errorf("AXFR of %s from %s ended before its closing SOA", zone, server)}
	}
	if len(errs) > 0 {
		return f, &pools.ValidationError{Errors: errs}
	}
	return f, nil
}
