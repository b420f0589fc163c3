package api_test

import (
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/pools"
)

func TestBearerAuth(t *testing.T) {
	e := parallelEnv(t, func(o *api.Options) { o.Token = "s3cret-token" })
	for _, c := range []struct {
		name, auth string
		status     int
	}{
		{"missing", "", http.StatusUnauthorized},
		{"wrong", "Bearer s3cret-tokeN", http.StatusUnauthorized},
		{"prefix", "Bearer s3cret", http.StatusUnauthorized},
		{"basic scheme", "Basic czNjcmV0LXRva2Vu", http.StatusUnauthorized},
		{"right", "Bearer s3cret-token", http.StatusOK},
		{"scheme is case-insensitive", "bearer s3cret-token", http.StatusOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, path := range []string{"/api/v1/zones", "/api/v1/openapi.json"} {
				hdr := []string{"Authorization", c.auth}
				if c.auth == "" {
					hdr = []string{"Authorization", ""}
				}
				r := e.do("GET", path, nil, hdr...)
				if c.status == http.StatusOK {
					if r.status != http.StatusOK {
						t.Fatalf("GET %s: %d %s", path, r.status, r.body)
					}
					continue
				}
				r.problem(t, http.StatusUnauthorized)
				if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
					t.Fatalf("WWW-Authenticate %q", r.header.Get("WWW-Authenticate"))
				}
			}
		})
	}
	// Probes and metrics stay outside auth.
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		if r := e.do("GET", path, nil, "Authorization", ""); r.status != http.StatusOK {
			t.Errorf("GET %s without a token: %d", path, r.status)
		}
	}
	// Writes are refused too, and store nothing.
	e.do("POST", "/api/v1/networks", networkBody("10.0.0.0/8"), "Authorization", "").problem(t, http.StatusUnauthorized)
	if n := total(t, e, pools.KindNetwork); n != 0 {
		t.Fatalf("%d networks stored without auth", n)
	}
}

func TestProbes(t *testing.T) {
	t.Parallel()
	var ready atomic.Bool
	e := newEnv(t, func(o *api.Options) { o.Ready = ready.Load })
	if r := e.do("GET", "/healthz", nil); r.status != http.StatusOK {
		t.Fatalf("healthz: %d", r.status)
	}
	e.do("GET", "/readyz", nil).problem(t, http.StatusServiceUnavailable)
	ready.Store(true)
	if r := e.do("GET", "/readyz", nil); r.status != http.StatusOK {
		t.Fatalf("readyz once ready: %d %s", r.status, r.body)
	}
}

func TestExplain(t *testing.T) {
	e, f := parallelFixture(t)
	base := "/api/v1/load_balancers/" + f.lb + "/explain"

	p := e.do("GET", base+"?client=300.1.1.1&ecs=10.0.0.0/99&type=MX", nil).problem(t, http.StatusBadRequest)
	if got := fieldPaths(p); len(got) != 3 || !got["client"] || !got["ecs"] || !got["type"] {
		t.Fatalf("errors %v, want client, ecs and type", p.Errors)
	}
	p = e.do("GET", base, nil).problem(t, http.StatusBadRequest)
	if !fieldPaths(p)["client"] {
		t.Fatalf("missing client not named: %v", p.Errors)
	}
	e.do("GET", "/api/v1/load_balancers/nope/explain?client=192.0.2.1", nil).problem(t, http.StatusNotFound)

	var got struct{ Result api.Explanation }
	r := e.do("GET", base+"?client=::ffff:192.0.2.1&ecs=198.51.100.77/24&type=aaaa", nil)
	if r.status != http.StatusOK {
		t.Fatalf("explain: %d %s", r.status, r.body)
	}
	r.json(t, &got)
	x := got.Result
	if x.Decision.LoadBalancer.ID != f.lb || x.Client != "192.0.2.1" || x.ECS != "198.51.100.0/24" || x.Decision.Client.QueryType != "AAAA" {
		t.Errorf("explain asked lb %q client %q ecs %q type %q", x.Decision.LoadBalancer.ID, x.Client, x.ECS, x.Decision.Client.QueryType)
	}
	got = struct{ Result api.Explanation }{}
	r = e.do("GET", base+"?client=2001:db8::1", nil)
	r.json(t, &got)
	if got.Result.Decision.Client.QueryType != "A" || got.Result.ECS != "" {
		t.Errorf("defaults: %+v", got.Result)
	}

	none := newEnv(t, func(o *api.Options) { o.Explainer = nil })
	g := none.fixture()
	none.do("GET", "/api/v1/load_balancers/"+g.lb+"/explain?client=192.0.2.1", nil).problem(t, http.StatusNotImplemented)
}

func TestPoolHealth(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var agreed atomic.Pointer[pools.Health]
	e := newEnv(t, func(o *api.Options) {
		o.Now = func() time.Time { return now }
		o.Health = agreed.Load
	})
	f := e.fixture()
	agreed.Store(pools.NewHealth(map[pools.OriginKey]pools.OriginHealth{{Pool: f.pool, Origin: "b"}: {Reason: "HTTP 503"}},
		map[pools.PoolRegion]time.Duration{{Pool: f.pool, Region: "WEU"}: 12500 * time.Microsecond}))
	for _, n := range []pools.NodeHealth{
		{Node: "fra-1", Region: "WEU", Published: now.Add(-2 * time.Second), Origins: []pools.OriginState{
			{Pool: f.pool, Origin: "a", Healthy: true, RTT: 12 * time.Millisecond, CheckedAt: now.Add(-10 * time.Second)},
			{Pool: f.pool, Origin: "b", Healthy: false, Reason: "HTTP 503", CheckedAt: now.Add(-4 * time.Second)},
			{Pool: "other", Origin: "a", Healthy: false},
		}},
		{Node: "iad-1", Region: "ENAM", Published: now.Add(-1 * time.Second), Origins: []pools.OriginState{
			{Pool: f.pool, Origin: "b", Healthy: false, Reason: "timeout", RTT: 90 * time.Millisecond, CheckedAt: now.Add(-30 * time.Second)},
		}},
	} {
		if err := e.store.PublishHealth(t.Context(), pools.FullUpdate(n)); err != nil {
			t.Fatal(err)
		}
	}
	var got struct{ Result api.PoolHealth }
	r := e.do("GET", "/api/v1/pools/"+f.pool+"/health", nil)
	if r.status != http.StatusOK {
		t.Fatalf("%d %s", r.status, r.body)
	}
	r.json(t, &got)
	h := got.Result
	if h.Pool != f.pool || len(h.Origins) != 3 || h.Healthy == nil || !*h.Healthy || h.RTTMs["WEU"] != 12.5 {
		t.Fatalf("pool health %s", r.body)
	}
	// A result is as old as its node's latest heartbeat (Published).
	a, b, c := h.Origins[0], h.Origins[1], h.Origins[2]
	if len(a.Checks) != 1 || a.Checks[0].Node != "fra-1" || a.Checks[0].RTTMs != 12 || a.Checks[0].AgeSeconds != 2 ||
		a.Checks[0].PublishedAgeSeconds != 2 || !*a.Healthy {
		t.Errorf("origin a: %+v", a)
	}
	// Checks are ordered by region then node: ENAM before WEU.
	if len(b.Checks) != 2 || b.Checks[0].Region != "ENAM" || b.Checks[0].Reason != "timeout" || b.Checks[0].AgeSeconds != 1 ||
		b.Checks[1].Reason != "HTTP 503" || *b.Healthy || b.Reason != "HTTP 503" {
		t.Errorf("origin b: %+v", b)
	}
	if len(c.Checks) != 0 || !*c.Healthy || c.Checks == nil {
		t.Errorf("origin c (never checked): %+v", c)
	}
	if a.State != api.StateUp || b.State != api.StateDown || c.State != api.StateNotChecked {
		t.Errorf("states a %q, b %q, c %q; want up, down, not_checked", a.State, b.State, c.State)
	}
}

// TestPoolHealthOwnView: this node's checks come from its checker, not
// from its last publication, which lags; the other nodes' from the store.
func TestPoolHealthOwnView(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var pool string
	e := newEnv(t, func(o *api.Options) {
		o.Now = func() time.Time { return now }
		o.OwnView = func(p string) pools.NodeHealth {
			if p != pool {
				t.Errorf("own view asked for pool %q, want %q", p, pool)
			}
			return pools.NodeHealth{Node: "fra-1", Region: "WEU", Published: now, Origins: []pools.OriginState{
				{Pool: p, Origin: "a", Healthy: false, Reason: "connection refused", CheckedAt: now},
			}}
		}
	})
	f := e.fixture()
	pool = f.pool
	for _, n := range []pools.NodeHealth{
		{Node: "fra-1", Region: "WEU", Published: now.Add(-2 * time.Second), Origins: []pools.OriginState{
			{Pool: f.pool, Origin: "a", Healthy: true, RTT: 12 * time.Millisecond, CheckedAt: now.Add(-10 * time.Second)},
		}},
		{Node: "iad-1", Region: "ENAM", Published: now.Add(-1 * time.Second), Origins: []pools.OriginState{
			{Pool: f.pool, Origin: "a", Healthy: true, RTT: 90 * time.Millisecond, CheckedAt: now.Add(-3 * time.Second)},
		}},
	} {
		if err := e.store.PublishHealth(t.Context(), pools.FullUpdate(n)); err != nil {
			t.Fatal(err)
		}
	}
	var got struct{ Result api.PoolHealth }
	e.do("GET", "/api/v1/pools/"+f.pool+"/health", nil).json(t, &got)
	a := got.Result.Origins[0]
	if len(a.Checks) != 2 {
		t.Fatalf("origin a: %d checks, want one per node: %+v", len(a.Checks), a.Checks)
	}
	iad, fra := a.Checks[0], a.Checks[1]
	if fra.Node != "fra-1" || fra.Healthy || fra.Reason != "connection refused" || fra.PublishedAgeSeconds != 0 {
		t.Errorf("this node's check: %+v, want its checker's", fra)
	}
	if iad.Node != "iad-1" || !iad.Healthy || iad.RTTMs != 90 {
		t.Errorf("the other node's check: %+v, want the store's", iad)
	}
}

func TestMetrics(t *testing.T) {
	e, f := parallelFixture(t)
	e.do("GET", "/api/v1/pools/"+f.pool, nil)
	e.do("GET", "/api/v1/pools/nope", nil)
	e.do("GET", "/no/such/path", nil)
	// Routes are patterns, never raw paths with ids; codes are classes.
	body := e.do("GET", "/metrics", nil).body
	lines := strings.Split(string(body), "\n")
	for _, want := range []string{
		`glb_api_requests_total{code="2xx",method="GET",route="/api/v1/pools/{id}"} 1`,
		`glb_api_requests_total{code="4xx",method="GET",route="/api/v1/pools/{id}"} 1`,
		`glb_api_requests_total{code="4xx",method="GET",route="unmatched"} 1`,
		`glb_api_requests_total{code="2xx",method="POST",route="/api/v1/pools"} 1`,
		`glb_api_request_duration_seconds_count{method="GET",route="/api/v1/pools/{id}"} 2`,
	} {
		if !slices.Contains(lines, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(string(body), f.pool) {
		t.Error("a pool id leaked into a metric label")
	}
	problems, err := testutil.GatherAndLint(e.reg)
	if err != nil || len(problems) > 0 {
		t.Fatalf("promlint: %v %v", err, problems)
	}
}
