package outbound

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// CheckURL checks the destination of a URL as it is written: its host, if
// an address, or every address its host name resolves to now through
// resolver (nil: the system's). A name that does not resolve cannot be
// checked and is refused. The error names the refusing rule.
func (p *Policy) CheckURL(ctx context.Context, resolver *net.Resolver, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		return p.Check("", a)
	}
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		var de *net.DNSError
		if errors.As(err, &de) {
			err = errors.New(de.Err)
		}
		return fmt.Errorf("host %s does not resolve (%v): where it leads cannot be checked", host, err)
	}
	for _, a := range addrs {
		if err := p.Check(host, a); err != nil {
			return err
		}
	}
	return nil
}

// DialContext returns a dial function that connects as d does (its
// Resolver finds the addresses) but refuses, before the connection is
// opened, every address p refuses. The check runs on the address the
// socket is about to connect to, so that a name resolving elsewhere than
// when its URL was written is caught.
func (p *Policy) DialContext(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		if _, err := netip.ParseAddr(host); err == nil {
			host = "" // written as an address: no name to match
		}
		dd := *d
		dd.ControlContext = func(_ context.Context, _, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return err
			}
			return p.Check(host, ap.Addr())
		}
		dd.Control = nil
		return dd.DialContext(ctx, network, addr)
	}
}

// Client returns an HTTP client whose every connection p allows, that
// follows no redirect (the first answer is the answer), uses no proxy
// (the proxy, not glbd, would connect to the destination unchecked),
// keeps no connection between requests (each request resolves and is
// checked anew) and gives up on a request after timeout. resolver nil is
// the system's.
func (p *Policy) Client(timeout time.Duration, resolver *net.Resolver) *http.Client {
	d := &net.Dialer{Timeout: timeout, Resolver: resolver}
	t := &http.Transport{
		Proxy:                 nil,
		DialContext:           p.DialContext(d),
		ForceAttemptHTTP2:     true,
		DisableKeepAlives:     true,
		TLSHandshakeTimeout:   timeout,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{
		Transport:     t,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Refusal returns the *RefusedError in err's chain, or nil: a request
// refused by the policy, which no receiver saw.
func Refusal(err error) *RefusedError {
	var re *RefusedError
	if errors.As(err, &re) {
		return re
	}
	return nil
}

// Resolver returns a resolver that asks the DNS server at server
// (IP:port) over UDP and TCP, or nil (the system's) when server is "".
func Resolver(server string) *net.Resolver {
	if server == "" {
		return nil
	}
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, server)
	}}
}
