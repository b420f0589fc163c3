package externaldns

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/external-dns/endpoint"
	"sigs.k8s.io/external-dns/plan"
	"sigs.k8s.io/external-dns/provider/webhook"
)

// The binaries under test, glbd and glb-externaldns from this checkout,
// built as they ship (their races are the main module's -race tests'
// business; here the race detector would only slow the timed sync).
// ExternalDNS takes part through its own packages at the version go.mod
// pins: its webhook client and its planner, driven as its controller
// drives them (sync below).
var glbdBin, providerBin string

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
	glbdBin, providerBin = filepath.Join(dir, "glbd"), filepath.Join(dir, "glb-externaldns")
	for bin, pkg := range map[string]string{glbdBin: "./cmd/glbd", providerBin: "./cmd/glb-externaldns"} {
		build := exec.Command("go", "build", "-o", bin, pkg)
		build.Dir = "../.."
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return 0, fmt.Errorf("building %s: %w", pkg, err)
		}
	}
	return m.Run(), nil
}

// process is a started binary whose stderr is kept, and matched line by
// line against a pattern announcing readiness.
type process struct {
	cmd  *exec.Cmd
	logs *lockedBuffer
	done chan struct{}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// start runs bin and waits for a stderr line matching ready, whose
// submatches it returns.
func start(t *testing.T, name, bin string, ready *regexp.Regexp, args ...string) (*process, []string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "GLB_DATABASE_URL=", "GLB_API_TOKEN=")
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p := &process{cmd: cmd, logs: &lockedBuffer{}, done: make(chan struct{})}
	found := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			p.logs.Write([]byte(sc.Text() + "\n"))
			if m := ready.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m:
				default:
				}
			}
		}
	}()
	go func() { _ = cmd.Wait(); pw.Close(); close(p.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("%s logs:\n%s", name, p.logs.String())
		}
	})
	select {
	case m := <-found:
		return p, m
	case <-p.done:
		t.Fatalf("%s exited at start:\n%s", name, p.logs.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not start within 60s:\n%s", name, p.logs.String())
	}
	return nil, nil
}

// glb is a running glbd reached as its bootstrap admin.
type glb struct {
	t        *testing.T
	api, dns string
}

const adminToken = "e2e-bootstrap-token"

func startGLB(t *testing.T) *glb {
	_, m := start(t, "glbd", glbdBin, regexp.MustCompile(`msg="glbd serving".* dns=(\S+) api=(\S+)`),
		"serve", "--dns-listen", "127.0.0.1:0", "--api-listen", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--node", "n1", "--region", "WEU", "--api-token", adminToken)
	return &glb{t: t, dns: m[1], api: "http://" + m[2]}
}

// call is an operator's request; path is under /api/v1.
func (g *glb) call(method, path string, body any) (int, map[string]any) {
	g.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, g.api+"/api/v1"+path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var env struct {
		Result map[string]any `json:"result"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&env)
	return resp.StatusCode, env.Result
}

func (g *glb) must(method, path string, body any) map[string]any {
	g.t.Helper()
	code, res := g.call(method, path, body)
	if code/100 != 2 {
		g.t.Fatalf("%s %s: %d %v", method, path, code, res)
	}
	return res
}

// lbs returns the load balancers by name.
func (g *glb) lbs() map[string]map[string]any {
	g.t.Helper()
	out := map[string]map[string]any{}
	for page := 1; ; page++ {
		req, _ := http.NewRequest("GET", fmt.Sprintf("%s/api/v1/load_balancers?per_page=1000&page=%d", g.api, page), nil)
		req.Header.Set("Authorization", "Bearer "+adminToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			g.t.Fatal(err)
		}
		var env struct {
			Result     []map[string]any `json:"result"`
			ResultInfo struct {
				TotalPages int `json:"total_pages"`
			} `json:"result_info"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&env)
		resp.Body.Close()
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
	req, _ := http.NewRequest("GET", g.api+"/api/v1/audit?per_page=1&actor="+actor, nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct {
		ResultInfo struct {
			TotalCount int `json:"total_count"`
		} `json:"result_info"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		g.t.Fatal(err)
	}
	return env.ResultInfo.TotalCount
}

// dig asks glbd's DNS server; the answers' data, sorted.
func (g *glb) dig(name, qtype string) string {
	g.t.Helper()
	host, port, _ := strings.Cut(g.dns, ":")
	out, err := exec.Command("dig", "@"+host, "-p", port, "+norec", "+time=2", "+tries=1", "+short", name, qtype).CombinedOutput()
	if err != nil {
		g.t.Fatalf("dig %s %s: %v\n%s", name, qtype, err, out)
	}
	f := strings.Fields(string(out))
	sort.Strings(f)
	return strings.Join(f, " ")
}

func eventually(t *testing.T, within time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v; last: %s", what, within, state)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// cluster is one Kubernetes cluster's half: the endpoints its sources
// would find, and its glb-externaldns.
type cluster struct {
	t        *testing.T
	name     string
	webhook  string
	provider *process

	mu      sync.Mutex
	desired []*endpoint.Endpoint
	// planned is how many changes the last sync planned.
	planned int
}

func startCluster(t *testing.T, g *glb, name, zone string, extra ...string) *cluster {
	t.Helper()
	tok := g.must(http.MethodPost, "/tokens", map[string]any{"name": name, "scopes": []string{"write"}})
	args := append([]string{"--server", g.api, "--token", tok["secret"].(string), "--zone", zone, "--owner", name,
		"--listen", "127.0.0.1:0", "--health-listen", "127.0.0.1:0"}, extra...)
	p, m := start(t, "glb-externaldns "+name, providerBin, regexp.MustCompile(`msg="glb-externaldns serving" webhook=(\S+)`), args...)
	return &cluster{t: t, name: name, webhook: "http://" + m[1], provider: p}
}

// set is what the cluster's sources find from now on.
func (c *cluster) set(eps ...*endpoint.Endpoint) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.desired = eps
}

// sync is one interval of ExternalDNS's controller with --provider=webhook
// --registry=noop --policy=sync (controller.RunOnce of the pinned
// version, step for step): negotiate, read the provider's records, let it
// adjust the desired endpoints, plan, and apply the plan's changes if it
// has any. It returns how long the sync took.
func (c *cluster) sync(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	c.mu.Lock()
	desired := make([]*endpoint.Endpoint, len(c.desired))
	for i, e := range c.desired {
		desired[i] = e.DeepCopy()
	}
	c.mu.Unlock()
	p, err := webhook.NewWebhookProvider(c.webhook)
	if err != nil {
		return 0, fmt.Errorf("%s: negotiate: %w", c.name, err)
	}
	current, err := p.Records(ctx)
	if err != nil {
		return 0, fmt.Errorf("%s: records: %w", c.name, err)
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
	c.planned = len(ch.Create) + len(ch.UpdateNew) + len(ch.Delete)
	c.mu.Unlock()
	if ch.HasChanges() {
		if err := p.ApplyChanges(ctx, ch); err != nil {
			return time.Since(start), fmt.Errorf("%s: apply changes: %w", c.name, err)
		}
	}
	return time.Since(start), nil
}

// plannedLast is how many changes the last sync planned.
func (c *cluster) plannedLast() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.planned
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
	for attempt := 0; attempt < 20; attempt++ {
		var os []*origin
		port := 0
		ok := true
		for _, a := range addrs {
			ln, err := net.Listen("tcp", net.JoinHostPort(a, fmt.Sprint(port)))
			if err != nil {
				ok = false
				break
			}
			port = ln.Addr().(*net.TCPAddr).Port
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })}
			go srv.Serve(ln)
			os = append(os, &origin{addr: a, srv: srv, ln: ln})
		}
		if ok {
			t.Cleanup(func() {
				for _, o := range os {
					o.srv.Close()
				}
			})
			return port, os
		}
		for _, o := range os {
			o.srv.Close()
		}
	}
	t.Fatalf("no common free port on %v", addrs)
	return 0, nil
}
