package healthcheck

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/glb-dns/glb/pools"
)

var none netip.Addr

func TestHTTPStatusCodes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status   int
		expected string
		healthy  bool
		reason   string
	}{
		{200, "200", true, ""},
		{204, "2xx", true, ""},
		{299, "2XX", true, ""},
		{503, "200", false, "HTTP 503 not in expected codes 200"},
		{503, "200, 301,5xx", true, ""},
		{301, "200, 301,5xx", true, ""},
		{404, "200,301,5xx", false, "HTTP 404 not in expected codes 200,301,5xx"},
		{200, "", true, ""}, // empty is Cloudflare's default, 200
		{200, "2x0", false, `bad expected_codes "2x0"`},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%d in %q", tc.status, tc.expected), func(t *testing.T) {
			t.Parallel()
			srv := serve(t, &sequence{codes: []int{tc.status}})
			m := monitor(pools.MonitorHTTP)
			m.ExpectedCodes = tc.expected
			if r := wantProbe(t, srv.URL, m, tc.healthy, tc.reason); r.healthy && r.rtt <= 0 {
				t.Errorf("healthy check without an RTT: %v", r.rtt)
			}
		})
	}
}

func TestHTTPExpectedBody(t *testing.T) {
	t.Parallel()
	pad := strings.Repeat("x", maxBody-2)
	cases := []struct {
		name, body, expected string
		healthy              bool
		reason               string
	}{
		{"case-insensitive match", "Status: OK, all good", "ok", true, ""},
		{"pattern case ignored too", "status: ok", "STATUS: OK", true, ""},
		{"no match", "status: degraded", "ok", false, `body does not contain "ok"`},
		{"match ending at the 10 KiB limit", pad + "ok", "ok", true, ""},
		{"match past the 10 KiB limit", pad + "xok", "ok", false, `body does not contain "ok"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				_, _ = io.WriteString(w, tc.body)
			}))
			m := monitor(pools.MonitorHTTP)
			m.ExpectedBody = tc.expected
			wantProbe(t, srv.URL, m, tc.healthy, tc.reason)
		})
	}
}

func TestHTTPRedirects(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.Handle("/old", http.RedirectHandler("/new", http.StatusFound))
	mux.HandleFunc("/new", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "new home") })
	srv := serve(t, mux)
	cases := []struct {
		name     string
		follow   bool
		expected string
		body     string
		healthy  bool
		reason   string
	}{
		{"not followed: 302 judged against 200", false, "200", "", false, "HTTP 302 not in expected codes 200"},
		{"not followed: 302 accepted as 3xx", false, "3xx", "", true, ""},
		{"followed to the 200", true, "200", "new home", true, ""},
		{"followed: the 302 itself no longer counts", true, "3xx", "", false, "HTTP 200 not in expected codes 3xx"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := monitor(pools.MonitorHTTP)
			m.Path = "/old"
			m.FollowRedirects = tc.follow
			m.ExpectedCodes = tc.expected
			m.ExpectedBody = tc.body
			wantProbe(t, srv.URL, m, tc.healthy, tc.reason)
		})
	}
}

func TestHTTPSVerifiesUnlessAllowInsecure(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil {
			t.Error("request without TLS")
		}
	}))
	// The refused handshake is the point of the test, not news.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)

	m := monitor(pools.MonitorHTTPS)
	wantProbe(t, srv.URL, m, false, "TLS: x509: certificate signed by unknown authority")

	m.AllowInsecure = true
	wantProbe(t, srv.URL, m, true, "")
}

func TestHTTPTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release) })
	m := monitor(pools.MonitorHTTP)
	m.Timeout = 1 // one test unit, 100 ms
	wantProbe(t, srv.URL, m, false, "timeout after 100ms")
}

func TestHTTPConnectionRefused(t *testing.T) {
	t.Parallel()
	wantProbe(t, closedPort(t), monitor(pools.MonitorHTTP), false, "connection refused")
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

func TestHTTPRetries(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		failures int
		retries  int
		healthy  bool
		hits     int
	}{
		{"passes on the last retry", 2, 2, true, 3},
		{"fails when every attempt fails", 3, 2, false, 3},
		{"no retry after a success", 0, 2, true, 1},
		{"no retries configured", 1, 0, false, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			codes := make([]int, 0, tc.failures+1)
			for range tc.failures {
				codes = append(codes, http.StatusServiceUnavailable)
			}
			seq := &sequence{codes: append(codes, http.StatusOK)}
			srv := serve(t, seq)
			m := monitor(pools.MonitorHTTP)
			m.Retries = tc.retries
			r := probeOnce(t, targetFor(t, srv.URL, m, pools.Origin{}), none)
			if r.healthy != tc.healthy {
				t.Errorf("healthy=%v (%s), want %v", r.healthy, r.reason, tc.healthy)
			}
			if got := seq.count(); got != tc.hits {
				t.Errorf("origin saw %d requests, want %d", got, tc.hits)
			}
		})
	}
}

func TestHTTPRequestShape(t *testing.T) {
	t.Parallel()
	seq := &sequence{codes: []int{200}}
	srv := serve(t, seq)
	m := monitor(pools.MonitorHTTP)
	m.Method = http.MethodHead
	m.Path = "/health?deep=1"
	m.Header = map[string][]string{"Host": {"monitor.example"}, "x-check": {"a", "b"}}

	// The origin's Host overrides the monitor's.
	o := pools.Origin{Header: map[string][]string{"host": {"origin.example"}}}
	if r := probeOnce(t, targetFor(t, srv.URL, m, o), none); !r.healthy {
		t.Fatalf("unhealthy: %s", r.reason)
	}
	req := seq.lastRequest()
	if req.Method != http.MethodHead || req.URL.Path != "/health" || req.URL.RawQuery != "deep=1" {
		t.Errorf("got %s %s, want HEAD /health?deep=1", req.Method, req.URL)
	}
	if req.Host != "origin.example" {
		t.Errorf("Host %q, want the origin's origin.example", req.Host)
	}
	if got := req.Header.Values("X-Check"); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("X-Check %v, want [a b]", got)
	}
	if ua := req.Header.Get("User-Agent"); ua != UserAgent || !strings.Contains(ua, "glb") {
		t.Errorf("User-Agent %q, want %q", ua, UserAgent)
	}

	// Without an origin Host, the monitor's applies; a monitor may set its
	// own User-Agent.
	m.Header["User-Agent"] = []string{"custom/2"}
	if r := probeOnce(t, targetFor(t, srv.URL, m, pools.Origin{}), none); !r.healthy {
		t.Fatalf("unhealthy: %s", r.reason)
	}
	req = seq.lastRequest()
	if req.Host != "monitor.example" {
		t.Errorf("Host %q, want the monitor's monitor.example", req.Host)
	}
	if ua := req.Header.Get("User-Agent"); ua != "custom/2" {
		t.Errorf("User-Agent %q, want the monitor's custom/2", ua)
	}
}

func TestHTTPSourceAddress(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen string
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen, _, _ = net.SplitHostPort(r.RemoteAddr)
		mu.Unlock()
	}))
	src := netip.MustParseAddr("127.0.0.2")
	if r := probeOnce(t, targetFor(t, srv.URL, monitor(pools.MonitorHTTP), pools.Origin{}), src); !r.healthy {
		t.Fatalf("unhealthy: %s", r.reason)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen != "127.0.0.2" {
		t.Errorf("origin saw the probe from %s, want 127.0.0.2", seen)
	}
}

func TestHTTPIPv6Origin(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Fatalf("listen on ::1: %v", err)
	}
	seq := &sequence{codes: []int{200}}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: seq}}
	srv.Start()
	t.Cleanup(srv.Close)
	tg := targetFor(t, ln.Addr().String(), monitor(pools.MonitorHTTP), pools.Origin{})
	if tg.address != "::1" {
		t.Fatalf("origin address %q, want ::1", tg.address)
	}
	// An IPv4 source must not stop an IPv6 origin from being checked.
	if r := probeOnce(t, tg, netip.MustParseAddr("127.0.0.2")); !r.healthy {
		t.Fatalf("unhealthy: %s", r.reason)
	}
	if host := seq.lastRequest().Host; !strings.HasPrefix(host, "[::1]:") {
		t.Errorf("Host %q, want a bracketed IPv6 literal", host)
	}
}

func TestHTTPHostnameOrigin(t *testing.T) {
	t.Parallel()
	seq := &sequence{codes: []int{200}}
	srv := serve(t, seq)
	r := probeOnce(t, targetFor(t, srv.URL, monitor(pools.MonitorHTTP), pools.Origin{Address: "localhost"}), none)
	if !r.healthy {
		t.Fatalf("hostname origin unhealthy: %s", r.reason)
	}
	if host := seq.lastRequest().Host; !strings.HasPrefix(host, "localhost:") {
		t.Errorf("Host %q, want the origin's hostname", host)
	}
}

func TestHTTPSAgainstPlainHTTP(t *testing.T) {
	t.Parallel()
	srv := serve(t, &sequence{codes: []int{200}})
	wantProbe(t, srv.URL, monitor(pools.MonitorHTTPS), false, "http: server gave HTTP response to HTTPS client")
}
