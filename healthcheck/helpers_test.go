package healthcheck

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/glb-dns/glb/internal/testnode"
	"github.com/glb-dns/glb/pools"
)

// testUnit is one monitor second in tests: a timeout of 1 lasts 100 ms.
const testUnit = 100 * time.Millisecond

// monitor returns Cloudflare's default monitor of a type, as the API
// would store it, without retries and with a 30 s timeout (300 test
// units): tests that are not about timeouts must not fail on a busy
// machine. One CI run saw a loopback TLS handshake stall for 5 s while
// other packages' tests and their PostgreSQL shared the two cores.
func monitor(typ pools.MonitorType) pools.Monitor {
	m := pools.DefaultMonitor()
	m.ID = "mon-" + string(typ)
	m.Type = typ
	m.Retries = 0
	m.Timeout = 300
	return m
}

// addrOf splits a server URL or host:port into address and port.
func addrOf(t *testing.T, s string) (string, int) {
	t.Helper()
	if u, err := url.Parse(s); err == nil && u.Host != "" {
		s = u.Host
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		t.Fatalf("split %q: %v", s, err)
	}
	p, _ := strconv.Atoi(port)
	return host, p
}

// targetFor aims monitor m at the server at addr (a URL or host:port).
func targetFor(t *testing.T, addr string, m pools.Monitor, o pools.Origin) *target {
	t.Helper()
	host, port := addrOf(t, addr)
	if o.Address == "" {
		o.Address = host
	}
	if o.Name == "" {
		o.Name = "o1"
	}
	m.Port = port
	p := pools.DefaultPool()
	p.ID, p.Name = "pool-1", "one"
	return newTarget(&p, newSpec(&m, testUnit), &o)
}

// wantProbe probes addr under m once and checks the outcome: healthy, or
// down for reason.
func wantProbe(t *testing.T, addr string, m pools.Monitor, healthy bool, reason string) result {
	t.Helper()
	r := probeOnce(t, targetFor(t, addr, m, pools.Origin{}), none)
	if r.healthy != healthy || r.reason != reason {
		t.Errorf("healthy=%v reason=%q, want healthy=%v reason=%q", r.healthy, r.reason, healthy, reason)
	}
	return r
}

// probeOnce runs one check (with the monitor's retries) of tg from src
// (the zero Addr for the system's choice).
func probeOnce(t *testing.T, tg *target, src netip.Addr) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), tg.budget()+10*time.Second)
	defer cancel()
	return check(ctx, newProber(tg, newClients(src)), tg.retries)
}

// sequence is a scripted origin (Traefik's HealthSequence idea): request
// n gets status codes[n], the last code repeating; it also records what
// it saw.
type sequence struct {
	mu    sync.Mutex
	codes []int
	hits  int
	last  *http.Request
}

func (s *sequence) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	code := s.codes[min(s.hits, len(s.codes)-1)]
	s.hits++
	s.last = r
	s.mu.Unlock()
	w.WriteHeader(code)
}

func (s *sequence) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits
}

func (s *sequence) lastRequest() *http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

func serve(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// eventually polls cond until it holds or 10 s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	eventuallyWithin(t, 10*time.Second, what, cond)
}

// eventuallyWithin polls cond until it holds or within passes.
func eventuallyWithin(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	testnode.Eventually(t, within, what, func() (bool, string) { return cond(), "not yet" })
}

// pairOf is the check of origin k under its pool's first monitor; nil
// when the origin is not checked. c.mu is held or the Checker not running.
func (c *Checker) pairOf(k pools.OriginKey) *pair {
	if w := c.watches[k]; w != nil {
		return w.pairs[0]
	}
	return nil
}
