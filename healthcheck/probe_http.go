package healthcheck

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/glb-dns/glb/pools"
)

// maxBody is how much of a response body expected_body searches, as in
// Cloudflare: a health endpoint that needs more is not a health endpoint.
const maxBody = 10 << 10

// httpProber checks an http or https monitor.
type httpProber struct {
	*httpSpec
	client *http.Client
	key    clientKey
	url    string
	host   string
}

// httpSpec is what a spec's http probes share, parsed once per monitor.
type httpSpec struct {
	method   string
	header   http.Header
	timeout  time.Duration
	codes    codeSet
	codesErr error  // expected_codes does not parse
	body     []byte // lower-cased expected_body; nil when none
	bodyRaw  string
}

// http parses s for its http probes, once.
func (s *spec) http() *httpSpec {
	s.httpOnce.Do(func() {
		h := &httpSpec{method: s.method, header: http.Header{}, timeout: s.timeout}
		h.codes, h.codesErr = parseCodes(s.expectedCodes)
		for k, vs := range s.header {
			for _, v := range vs {
				h.header.Add(k, v)
			}
		}
		if h.header.Get("User-Agent") == "" {
			h.header.Set("User-Agent", UserAgent)
		}
		if s.expectedBody != "" {
			h.body = bytes.ToLower([]byte(s.expectedBody))
			h.bodyRaw = s.expectedBody
		}
		s.httpSpec = h
	})
	return s.httpSpec
}

func newHTTPProber(t *target, cs *clients) prober {
	h := t.http()
	if h.codesErr != nil {
		return failingProber(h.codesErr.Error())
	}
	scheme := "http"
	if t.typ == pools.MonitorHTTPS {
		scheme = "https"
	}
	k := clientKey{insecure: t.insecure, follow: t.follow}
	if t.typ == pools.MonitorHTTPS && t.host != "" {
		// The Host header names the site, so it is also the name the
		// certificate must carry (SNI), as browsers would do. Plain http
		// has no use for it, and so shares one client whatever the Host.
		k.serverName = hostOnly(t.host)
	}
	return &httpProber{
		httpSpec: h,
		client:   cs.client(k),
		key:      k,
		url:      scheme + "://" + t.hostPort() + t.path,
		host:     t.host,
	}
}

// clients are the HTTP clients of one Checker's probes, one per way of
// checking (TLS verification, SNI name, redirects) rather than one per
// target: a hundred thousand targets share a handful (unless each https
// origin names a site of its own). Sharing holds no sockets open, since
// no client keeps idle connections (newClient).
type clients struct {
	src netip.Addr
	mu  sync.Mutex
	m   map[clientKey]*http.Client
}

type clientKey struct {
	insecure, follow bool
	serverName       string
}

func newClients(src netip.Addr) *clients {
	return &clients{src: src, m: map[clientKey]*http.Client{}}
}

// source is the local address of probes; nil cs has none.
func (cs *clients) source() netip.Addr {
	if cs == nil {
		return netip.Addr{}
	}
	return cs.src
}

// client returns the shared client for k; nil cs builds one unshared.
func (cs *clients) client(k clientKey) *http.Client {
	if cs == nil {
		return newClient(k, netip.Addr{})
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c := cs.m[k]
	if c == nil {
		c = newClient(k, cs.src)
		cs.m[k] = c
	}
	return c
}

// retain forgets the clients no probe uses any longer (a Host header
// edited away), so that their number follows the configuration.
func (cs *clients) retain(used map[clientKey]bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	maps.DeleteFunc(cs.m, func(k clientKey, _ *http.Client) bool { return !used[k] })
}

func newClient(k clientKey, src netip.Addr) *http.Client {
	tr := &http.Transport{
		// Never an environment proxy: the check is of the origin itself.
		Proxy:       nil,
		DialContext: dialer(src),
		// A fresh connection per check: a reused one would hide a dead
		// listener behind an established socket. It also bounds the
		// sockets of a checker by its checks in flight: idle connections
		// to a hundred thousand origins would be a hundred thousand
		// descriptors.
		DisableKeepAlives:      true,
		TLSClientConfig:        &tls.Config{InsecureSkipVerify: k.insecure, ServerName: k.serverName},
		MaxResponseHeaderBytes: 64 << 10,
	}
	client := &http.Client{Transport: tr}
	if !k.follow {
		client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	return client
}

func (p *httpProber) attempt(ctx context.Context) result {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, p.method, p.url, nil)
	if err != nil {
		return result{reason: "bad request: " + err.Error()}
	}
	req.Header = p.header.Clone()
	if p.host != "" {
		req.Host = p.host
	}
	start := time.Now()
	resp, err := p.client.Do(req)
	if err != nil {
		return result{reason: describe(ctx, err, p.timeout)}
	}
	// Time to the response head: connection, TLS and the origin's own
	// work, which is what dynamic_latency steering wants to compare.
	rtt := time.Since(start)
	defer resp.Body.Close()
	if !p.codes.match(resp.StatusCode) {
		return result{reason: fmt.Sprintf("HTTP %d not in expected codes %s", resp.StatusCode, p.codes)}
	}
	if p.body != nil {
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
		if !bytes.Contains(bytes.ToLower(b), p.body) {
			if err != nil {
				return result{reason: "read body: " + describe(ctx, err, p.timeout)}
			}
			return result{reason: "body does not contain " + strconv.Quote(p.bodyRaw)}
		}
	}
	return result{healthy: true, rtt: rtt}
}

// codeSet is a parsed expected_codes: exact codes and classes ("2xx").
type codeSet struct {
	exact   []int
	classes []int // hundreds digit
	text    string
}

func parseCodes(s string) (codeSet, error) {
	if strings.TrimSpace(s) == "" {
		s = "200" // Cloudflare's default
	}
	cs := codeSet{text: s}
	for _, c := range strings.Split(s, ",") {
		c = strings.ToLower(strings.TrimSpace(c))
		if len(c) == 3 && c[1:] == "xx" && c[0] >= '1' && c[0] <= '5' {
			cs.classes = append(cs.classes, int(c[0]-'0'))
			continue
		}
		n, err := strconv.Atoi(c)
		if err != nil || n < 100 || n > 599 {
			return codeSet{}, fmt.Errorf("bad expected_codes %q", s)
		}
		cs.exact = append(cs.exact, n)
	}
	return cs, nil
}

func (cs codeSet) match(code int) bool {
	for _, c := range cs.exact {
		if c == code {
			return true
		}
	}
	for _, c := range cs.classes {
		if code/100 == c {
			return true
		}
	}
	return false
}

func (cs codeSet) String() string { return cs.text }

// hostOnly strips a port from a Host header value.
func hostOnly(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		return host
	}
	return strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
}
