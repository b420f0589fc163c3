package healthcheck

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/glb-dns/glb/pools"
)

// maxBody is how much of a response body expected_body searches, as in
// Cloudflare: a health endpoint that needs more is not a health endpoint.
const maxBody = 10 << 10

// httpProber checks an http or https monitor.
type httpProber struct {
	client  *http.Client
	method  string
	url     string
	header  http.Header
	host    string
	timeout time.Duration
	codes   codeSet
	body    []byte // lower-cased expected_body; nil when none
	bodyRaw string
}

func newHTTPProber(t *target, src netip.Addr) prober {
	codes, err := parseCodes(t.expectedCodes)
	if err != nil {
		return failingProber(err.Error())
	}
	scheme := "http"
	if t.typ == pools.MonitorHTTPS {
		scheme = "https"
	}
	tlsConf := &tls.Config{InsecureSkipVerify: t.insecure}
	if t.host != "" {
		// The Host header names the site, so it is also the name the
		// certificate must carry (SNI), as browsers would do.
		tlsConf.ServerName = hostOnly(t.host)
	}
	tr := &http.Transport{
		// Never an environment proxy: the check is of the origin itself.
		Proxy:       nil,
		DialContext: dialer(src),
		// A fresh connection per check: a reused one would hide a dead
		// listener behind an established socket.
		DisableKeepAlives:      true,
		TLSClientConfig:        tlsConf,
		MaxResponseHeaderBytes: 64 << 10,
	}
	client := &http.Client{Transport: tr}
	if !t.follow {
		client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	header := http.Header{}
	for k, vs := range t.header {
		for _, v := range vs {
			header.Add(k, v)
		}
	}
	if header.Get("User-Agent") == "" {
		header.Set("User-Agent", UserAgent)
	}
	p := &httpProber{
		client:  client,
		method:  t.method,
		url:     scheme + "://" + t.hostPort() + t.path,
		header:  header,
		host:    t.host,
		timeout: t.timeout,
		codes:   codes,
	}
	if t.expectedBody != "" {
		p.body = bytes.ToLower([]byte(t.expectedBody))
		p.bodyRaw = t.expectedBody
	}
	return p
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
