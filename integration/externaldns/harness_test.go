package externaldns

import (
	"context"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/external-dns/endpoint"
	"sigs.k8s.io/external-dns/plan"
	"sigs.k8s.io/external-dns/provider/webhook"

	"github.com/glb-dns/glb/internal/testnode"
)

// The binaries under test, glbd and glb-externaldns from this checkout,
// built as they ship (their races are the main module's -race tests'
// business; here the race detector would only slow the timed sync).
//
// ExternalDNS takes part at the version go.mod pins as the real binary,
// built from its Go module (go.mod's tool directive) once per run: some
// 1,600 packages, whose first build is the bulk of this test's cost (see
// docs/kubernetes.md) and a link once Go's build cache holds them. With
// EXTERNALDNS=inprocess in the environment (make
// test-externaldns-inprocess, for a quick loop while changing the
// provider) its own packages stand in for it, driven in process as its
// controller drives them: its webhook client and planner. Both read the
// cluster's endpoints from the same connector server.
var glbdBin, providerBin, externalDNSBin string

// realBinary says the test runs the ExternalDNS binary.
var realBinary = os.Getenv("EXTERNALDNS") != "inprocess"

func TestMain(m *testing.M) {
	code, err := setup(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "externaldns test:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func setup(m *testing.M) (int, error) {
	for _, tool := range []string{"dig", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			return 0, fmt.Errorf("the test needs %s", tool)
		}
	}
	dir, err := os.MkdirTemp("", "glb-externaldns-e2e")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	glbdBin, providerBin, externalDNSBin = filepath.Join(dir, "glbd"), filepath.Join(dir, "glb-externaldns"), filepath.Join(dir, "external-dns")
	type build struct {
		bin, pkg, dir string
		flags         []string
	}
	builds := []build{
		{glbdBin, "./cmd/glbd", "../..", nil},
		{providerBin, "./cmd/glb-externaldns", "../..", nil},
	}
	if realBinary {
		// Without the symbol table and DWARF: the link of a binary this
		// size is the whole cost of a cached build, and a shorter one. The
		// compiled packages are the ones the tests' own build shares.
		builds = append(builds, build{externalDNSBin, "sigs.k8s.io/external-dns", ".", []string{"-ldflags=-s -w"}})
	}
	for _, b := range builds {
		start := time.Now()
		if err := testnode.Build(b.dir, b.pkg, b.bin, b.flags...); err != nil {
			return 0, err
		}
		fmt.Fprintf(os.Stderr, "externaldns test: built %s in %v\n", b.pkg, time.Since(start).Round(time.Second))
	}
	return m.Run(), nil
}

// glb is a running glbd reached as its bootstrap admin.
type glb struct {
	t        *testing.T
	api, dns string
}

const adminToken = "e2e-bootstrap-token"

func startGLB(t *testing.T) *glb {
	n := testnode.StartGLBD(t, glbdBin, "--api-token", adminToken)
	return &glb{t: t, dns: n.DNS, api: n.API}
}

// client is the API as the bootstrap admin reaches it; paths are under
// /api/v1.
func (g *glb) client() testnode.API {
	return testnode.API{Base: g.api + "/api/v1", Token: adminToken}
}

// call is an operator's request; path is under /api/v1.
func (g *glb) call(method, path string, body any) (int, map[string]any) {
	g.t.Helper()
	status, _, b := g.client().Do(g.t, method, path, body)
	var res map[string]any
	testnode.Result(b, &res)
	return status, res
}

func (g *glb) must(method, path string, body any) map[string]any {
	g.t.Helper()
	code, res := g.call(method, path, body)
	if code/100 != 2 {
		g.t.Fatalf("%s %s: %d %v", method, path, code, res)
	}
	return res
}

// get decodes the answer to an operator's GET of path (under /api/v1),
// envelope and all, into out.
func (g *glb) get(path string, out any) {
	g.t.Helper()
	_, _, b := g.client().Do(g.t, http.MethodGet, path, nil)
	if err := json.Unmarshal(b, out); err != nil {
		g.t.Fatalf("GET %s: %v", path, err)
	}
}

// lbs returns the load balancers by name.
func (g *glb) lbs() map[string]map[string]any {
	g.t.Helper()
	out := map[string]map[string]any{}
	for page := 1; ; page++ {
		var env struct {
			Result     []map[string]any `json:"result"`
			ResultInfo struct {
				TotalPages int `json:"total_pages"`
			} `json:"result_info"`
		}
		g.get(fmt.Sprintf("/load_balancers?per_page=1000&page=%d", page), &env)
		for _, o := range env.Result {
			out[o["name"].(string)] = o
		}
		if page >= env.ResultInfo.TotalPages {
			return out
		}
	}
}

// writesBy counts the audit log's entries by one actor: every accepted
// write has exactly one.
func (g *glb) writesBy(actor string) int {
	g.t.Helper()
	return g.client().Count(g.t, "/audit?per_page=1&actor="+actor)
}

// dig asks glbd's DNS server; the answers' data, sorted.
func (g *glb) dig(name, qtype string) string {
	g.t.Helper()
	return testnode.DigShort(g.t, g.dns, name, qtype)
}

// cluster is one Kubernetes cluster's half: the endpoints its sources
// would find, served to ExternalDNS's connector source, and its
// glb-externaldns.
type cluster struct {
	t        *testing.T
	name     string
	webhook  string
	provider *testnode.Process
	// source is the address of the connector server ExternalDNS dials.
	source string

	mu      sync.Mutex
	desired []*endpoint.Endpoint
	// upToDate says the last sync planned no change.
	upToDate bool
}

func startCluster(t *testing.T, g *glb, name, zone string, extra ...string) *cluster {
	t.Helper()
	// Scoped to its zone, as docs/kubernetes.md recommends: everything
	// the provider does must fit in what such a token reaches.
	tok := g.must(http.MethodPost, "/tokens", map[string]any{"name": name, "scopes": []string{"write"}, "zones": []string{zone}})
	args := append([]string{"--server", g.api, "--token", tok["secret"].(string), "--zone", zone, "--owner", name,
		"--listen", "127.0.0.1:0", "--health-listen", "127.0.0.1:0"}, extra...)
	p, m := testnode.Start(t, "glb-externaldns "+name, append([]string{providerBin}, args...), []string{"GLB_DATABASE_URL=", "GLB_API_TOKEN="},
		regexp.MustCompile(`msg="glb-externaldns serving" webhook=(\S+)`))
	c := &cluster{t: t, name: name, webhook: "http://" + m[1], provider: p}
	c.serveSource()
	return c
}

// serveSource is the other end of ExternalDNS's connector source (source/
// connector.go of the pinned version): for each connection, the cluster's
// endpoints as one gob-encoded []*endpoint.Endpoint, then close.
func (c *cluster) serveSource() {
	c.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		c.t.Fatal(err)
	}
	c.source = ln.Addr().String()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.mu.Lock()
			eps := make([]*endpoint.Endpoint, len(c.desired))
			copy(eps, c.desired)
			c.mu.Unlock()
			_ = gob.NewEncoder(conn).Encode(eps)
			conn.Close()
		}
	}()
	c.t.Cleanup(func() { ln.Close(); <-done })
}

// set is what the cluster's sources find from now on.
func (c *cluster) set(eps ...*endpoint.Endpoint) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.desired = eps
}

// externalDNSArgs are the binary's flags for one sync of the cluster: the
// deploy example's provider, registry and policy, and the connector
// source.
func (c *cluster) externalDNSArgs() []string {
	return []string{"--once",
		"--source=connector", "--connector-source-server=" + c.source,
		"--provider=webhook", "--webhook-provider-url=" + c.webhook,
		"--registry=noop", "--policy=sync",
		// Two clusters' ExternalDNS run at once: no fixed metrics port.
		"--metrics-address=127.0.0.1:0"}
}

// sync is one interval of the cluster's ExternalDNS: it negotiates with
// glb-externaldns, reads its records, reads the connector source, has the
// provider adjust the endpoints, plans, and applies the plan's changes if
// it has any. It returns how long the sync took.
func (c *cluster) sync(ctx context.Context) (time.Duration, error) {
	if realBinary {
		return c.syncBinary(ctx)
	}
	return c.syncInProcess(ctx)
}

// syncBinary runs the pinned binary --once; an error exits non-zero. The
// time is start to exit.
func (c *cluster) syncBinary(ctx context.Context) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, externalDNSBin, c.externalDNSArgs()...)
	// No cluster, no kubeconfig: the connector source needs neither.
	cmd.Env = append(os.Environ(), "KUBECONFIG=/nonexistent")
	var out testnode.Logs
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if err != nil {
		return took, fmt.Errorf("%s: external-dns --once: %w\n%s", c.name, err, out.String())
	}
	c.mu.Lock()
	c.upToDate = strings.Contains(out.String(), `msg="All records are already up to date"`)
	c.mu.Unlock()
	return took, nil
}

// syncInProcess is controller.RunOnce of the pinned version, step for
// step, with the flags of externalDNSArgs: the connector source's read
// (source/connector.go), then ExternalDNS's webhook client and planner.
func (c *cluster) syncInProcess(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	p, err := webhook.NewWebhookProvider(c.webhook)
	if err != nil {
		return 0, fmt.Errorf("%s: negotiate: %w", c.name, err)
	}
	current, err := p.Records(ctx)
	if err != nil {
		return 0, fmt.Errorf("%s: records: %w", c.name, err)
	}
	desired, err := readConnector(c.source)
	if err != nil {
		return 0, fmt.Errorf("%s: connector source: %w", c.name, err)
	}
	adjusted, err := p.AdjustEndpoints(desired)
	if err != nil {
		return 0, fmt.Errorf("%s: adjust endpoints: %w", c.name, err)
	}
	pl := (&plan.Plan{
		Policies:       []plan.Policy{&plan.SyncPolicy{}},
		Current:        current,
		Desired:        adjusted,
		DomainFilter:   endpoint.MatchAllDomainFilters{p.GetDomainFilter()},
		ManagedRecords: []string{endpoint.RecordTypeA, endpoint.RecordTypeAAAA, endpoint.RecordTypeCNAME},
	}).Calculate()
	ch := pl.Changes
	c.mu.Lock()
	c.upToDate = !ch.HasChanges()
	c.mu.Unlock()
	if ch.HasChanges() {
		if err := p.ApplyChanges(ctx, ch); err != nil {
			return time.Since(start), fmt.Errorf("%s: apply changes: %w", c.name, err)
		}
	}
	return time.Since(start), nil
}

// readConnector is what ExternalDNS's connector source does at each sync:
// dial, decode one gob of []*endpoint.Endpoint.
func readConnector(addr string) ([]*endpoint.Endpoint, error) {
	eps := []*endpoint.Endpoint{}
	conn, err := net.DialTimeout("tcp", addr, 30*time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := gob.NewDecoder(conn).Decode(&eps); err != nil {
		return nil, err
	}
	return eps, nil
}

// upToDateLast says the last sync planned no change.
func (c *cluster) upToDateLast() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.upToDate
}

func (c *cluster) mustSync() time.Duration {
	c.t.Helper()
	took, err := c.sync(context.Background())
	if err != nil {
		c.t.Fatal(err)
	}
	return took
}

// syncAll runs one sync of every cluster at once.
func syncAll(t *testing.T, cs ...*cluster) {
	t.Helper()
	errs := make(chan error, len(cs))
	for _, c := range cs {
		go func() {
			_, err := c.sync(context.Background())
			errs <- err
		}()
	}
	for range cs {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

// origin is an HTTP server on one loopback address that a monitor checks.
type origin struct {
	addr string
	srv  *http.Server
	ln   net.Listener
}

// startOrigins serves 200 on the same port of each address, so that one
// monitor (one port) checks them all.
func startOrigins(t *testing.T, addrs ...string) (int, []*origin) {
	t.Helper()
	var os []*origin
	for i, ln := range testnode.SharedPort(t, addrs...) {
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })}
		go srv.Serve(ln)
		os = append(os, &origin{addr: addrs[i], srv: srv, ln: ln})
	}
	t.Cleanup(func() {
		for _, o := range os {
			o.srv.Close()
		}
	})
	return os[0].ln.Addr().(*net.TCPAddr).Port, os
}
