package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/api/apitest"
	"github.com/glb-dns/glb/internal/tabledns"
	"github.com/glb-dns/glb/outbound"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/pools/embedded/embeddedtest"
	"github.com/glb-dns/glb/steering"
)

// openStore is the store every test runs against: the real embedded one.
func openStore(t *testing.T) pools.Store {
	t.Helper()
	return embeddedtest.Open(t)
}

// echoExplainer is a small real Explainer: it returns what it was asked,
// which is what the API is responsible for, in the shape of a real trace
// so that the document's schema of it is checked too.
type echoExplainer struct{}

func (echoExplainer) Explain(_ context.Context, lbID string, client netip.Addr, ecs netip.Prefix, qtype string) (*api.Explanation, error) {
	out := &api.Explanation{Revision: 1, Client: client.String(), LocatedBy: netip.PrefixFrom(client, client.BitLen()).String()}
	if ecs.IsValid() {
		out.ECS = ecs.String()
	}
	out.Decision = steering.Trace{
		LoadBalancer: steering.TraceLB{ID: lbID, Name: "www.glb.example.com", Policy: "off"},
		Client:       steering.TraceClient{Prefix: -1, SourcePrefix: -1, QueryType: qtype},
		Candidates:   []steering.TraceCandidate{{ID: "p", Name: "p", Source: "default_pools", Enabled: true, Healthy: true, HealthyOrigins: 1, MinimumOrigins: 1, Chosen: true}},
		Pool:         steering.TracePool{ID: "p", Name: "p", Reason: "first enabled, healthy candidate"},
		Affinity: steering.TraceAffinity{Spillover: "ZONAL_AFFINITY_DISABLED", A: []string{"a"}, B: []string{"a"}, C: []string{},
			I: []string{}, M: []string{"a"}, Result: "zonal affinity disabled: M = A"},
		Origins: steering.TraceOrigins{Policy: "random", Family: qtype, Eligible: []steering.TraceWeight{{Name: "a", Weight: 1, Share: 1}}, Picked: []string{"a"}},
		Records: []steering.TraceRecord{{Origin: "a", Type: qtype, Value: "192.0.2.10"}},
		TTL:     30,
		AllDown: steering.TraceAllDown{Action: "fallback"},
		Safety:  []pools.ShiftHarm{},
	}
	return out, nil
}

type env struct {
	t   *testing.T
	srv *httptest.Server
	// client checks every response against api/openapi.json.
	client *http.Client
	store  pools.Store
	reg    *prometheus.Registry
	token  string
	audit  auditTrail
}

// newEnv serves the API over a real HTTP server and a real store; opt
// adjusts the options before the handler is built.
func newEnv(t *testing.T, opt func(*api.Options)) *env {
	t.Helper()
	e := &env{t: t, store: openStore(t), reg: prometheus.NewRegistry()}
	o := api.Options{Store: e.store, Explainer: echoExplainer{}, Registry: e.reg, Resolver: exampleResolver(t)}
	if opt != nil {
		opt(&o)
	}
	e.token = o.Token
	e.srv = httptest.NewServer(api.New(o))
	t.Cleanup(e.srv.Close)
	t.Cleanup(e.checkAudit) // runs first, with the store still open
	e.client = apitest.Must(t).Client(t, e.srv.Client().Transport)
	return e
}

// parallelEnv is how most tests start: newEnv, run beside the other tests.
func parallelEnv(t *testing.T, opt func(*api.Options)) *env {
	t.Helper()
	t.Parallel()
	return newEnv(t, opt)
}

// parallelFixture is parallelEnv with the default options and one object
// of each kind a load balancer needs already created.
func parallelFixture(t *testing.T) (*env, fixture) {
	t.Helper()
	e := parallelEnv(t, nil)
	return e, e.fixture()
}

// listPage is one page of a list as the API answers it.
type listPage[T any] struct {
	Result     []T `json:"result"`
	ResultInfo struct {
		Page       int `json:"page"`
		PerPage    int `json:"per_page"`
		Count      int `json:"count"`
		TotalCount int `json:"total_count"`
		TotalPages int `json:"total_pages"`
	} `json:"result_info"`
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body into v, failing the test when it is not JSON.
func (r response) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// problem decodes a problem+json body, asserting the status and type.
func (r response) problem(t *testing.T, status int) api.Problem {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type %q, want application/problem+json", ct)
	}
	var p api.Problem
	r.json(t, &p)
	if p.Status != status || p.Title == "" || p.Type == "" {
		t.Fatalf("problem %+v lacks status %d, title or type", p, status)
	}
	return p
}

// do sends a request; body is sent verbatim when it is a string or
// []byte, else as JSON. hdr is name, value pairs. The env's token is sent
// unless hdr sets Authorization.
func (e *env) do(method, path string, body any, hdr ...string) response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if e.token != "" {
		req.Header.Set("Authorization", "Bearer "+e.token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if e.client == nil { // an env built by hand
		e.client = apitest.Must(e.t).Client(e.t, e.srv.Client().Transport)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	e.noteWrite(req, resp.StatusCode, b)
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// create POSTs body and returns the stored object as a generic map,
// failing unless the answer is 201 with a Location and an ETag.
func (e *env) create(kind pools.Kind, body any) map[string]any {
	e.t.Helper()
	r := e.do("POST", "/api/v1/"+string(kind), body)
	if r.status != http.StatusCreated {
		e.t.Fatalf("create %s: status %d: %s", kind, r.status, r.body)
	}
	var out struct{ Result map[string]any }
	r.json(e.t, &out)
	id, _ := out.Result["id"].(string)
	if want := "/api/v1/" + string(kind) + "/" + id; id == "" || r.header.Get("Location") != want {
		e.t.Fatalf("create %s: Location %q, want %q", kind, r.header.Get("Location"), want)
	}
	if r.header.Get("ETag") != `"1"` {
		e.t.Fatalf("create %s: ETag %q, want \"1\"", kind, r.header.Get("ETag"))
	}
	return out.Result
}

func fieldPaths(p api.Problem) map[string]bool {
	m := map[string]bool{}
	for _, fe := range p.Errors {
		m[fe.Path] = true
	}
	return m
}

// Fixtures: one object of each kind, wired together by ids.

func zoneBody() map[string]any {
	return map[string]any{
		"name":        "glb.example.com",
		"nameservers": []string{"ns1.glb.example.com", "ns2.glb.example.com"},
		"soa":         map[string]any{"rname": "hostmaster.example.com"},
		"records": []map[string]any{
			{"name": "ns1.glb.example.com", "type": "A", "content": "192.0.2.53"},
		},
	}
}

func monitorBody() map[string]any {
	return map[string]any{"type": "https", "path": "/healthz", "expected_codes": "2xx", "interval": 30}
}

// setDefaultPools makes ids load balancer lb's default pools, in order.
func (e *env) setDefaultPools(lb string, ids ...string) {
	e.t.Helper()
	if r := e.do("PATCH", "/api/v1/load_balancers/"+lb, map[string]any{"default_pools": ids}); r.status != http.StatusOK {
		e.t.Fatalf("default pools %v: %d %s", ids, r.status, r.body)
	}
}

func poolBody(monitor string) map[string]any {
	return map[string]any{
		"name":     "web-eu",
		"monitor":  monitor,
		"latitude": 50.1, "longitude": 8.7,
		"origins": []map[string]any{
			{"name": "a", "address": "192.0.2.10", "weight": 0.4, "zone": "zone-1"},
			{"name": "b", "address": "192.0.2.11", "weight": 0.3, "zone": "zone-1"},
			{"name": "c", "address": "2001:db8::12", "weight": 0.3, "zone": "zone-2"},
		},
	}
}

func lbBody(zone, pool string) map[string]any {
	return map[string]any{
		"zone": zone, "name": "www.glb.example.com",
		"default_pools": []string{pool}, "fallback_pool": pool,
	}
}

func networkBody(cidr string) map[string]any {
	return map[string]any{"cidr": cidr, "zone": "zone-1", "region": "WEU", "country": "DE"}
}

// anotherPool creates a pool like the fixture's (poolBody, under the same
// monitor) named name and returns its id.
func (e *env) anotherPool(f fixture, name string) string {
	e.t.Helper()
	body := poolBody(f.monitor)
	body["name"] = name
	return e.create(pools.KindPool, body)["id"].(string)
}

// fixture creates one of every kind and returns their ids.
type fixture struct{ zone, monitor, pool, lb, network string }

func (e *env) fixture() fixture {
	e.t.Helper()
	var f fixture
	f.zone = e.create(pools.KindZone, zoneBody())["id"].(string)
	f.monitor = e.create(pools.KindMonitor, monitorBody())["id"].(string)
	f.pool = e.create(pools.KindPool, poolBody(f.monitor))["id"].(string)
	f.lb = e.create(pools.KindLoadBalancer, lbBody(f.zone, f.pool))["id"].(string)
	f.network = e.create(pools.KindNetwork, networkBody("10.1.0.0/16"))["id"].(string)
	return f
}

// exampleResolver is a real DNS server the test controls, answering the
// receivers' names the tests write (public documentation addresses), so
// that the API's outbound check resolves them without the Internet.
func exampleResolver(t *testing.T) *net.Resolver {
	ns := tabledns.Start(t)
	for _, name := range []string{"hooks.example.com", "h.example.com", "events.example.com", "prom.example.com"} {
		ns.Set(name, "192.0.2.10")
	}
	return outbound.Resolver(ns.Addr)
}
