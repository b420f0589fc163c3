package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
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
)

// glbdBin is a glbd built once: the provider is tested against the real
// server with its embedded store, over HTTP.
var glbdBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "glb-externaldns-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	glbdBin = filepath.Join(dir, "glbd")
	build := exec.Command("go", "build", "-o", glbdBin, "../glbd")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building glbd:", err)
		os.Exit(1)
	}
	if _, err := exec.LookPath("dig"); err != nil {
		fmt.Fprintln(os.Stderr, "the tests need dig (Debian/Ubuntu: apt-get install bind9-dnsutils)")
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const testToken = "test-bootstrap-token"

// node is a running glbd with one zone, glb.test.
type node struct {
	t    *testing.T
	api  string
	dns  string
	zone string
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

var servingLine = regexp.MustCompile(`msg="glbd serving".* dns=(\S+) api=(\S+)`)

func startNode(t *testing.T) *node {
	t.Helper()
	cmd := exec.Command(glbdBin, "serve", "--dns-listen", "127.0.0.1:0", "--api-listen", "127.0.0.1:0",
		"--data-dir", t.TempDir(), "--node", "n1", "--region", "WEU", "--api-token", testToken)
	cmd.Env = append(os.Environ(), "GLB_DATABASE_URL=")
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatalf("start glbd: %v", err)
	}
	logs := &lockedBuffer{}
	found := make(chan [2]string, 1)
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			logs.Write([]byte(sc.Text() + "\n"))
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- [2]string{m[1], m[2]}:
				default:
				}
			}
		}
	}()
	go func() { _ = cmd.Wait(); pw.Close(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("glbd logs:\n%s", logs.String())
		}
	})
	n := &node{t: t}
	select {
	case a := <-found:
		n.dns, n.api = a[0], "http://"+a[1]
	case <-done:
		t.Fatalf("glbd exited at start:\n%s", logs.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("glbd did not start within 60s:\n%s", logs.String())
	}
	n.zone = "z1"
	n.must(http.MethodPost, "/zones", map[string]any{"id": n.zone, "name": "glb.test", "nameservers": []string{"ns1.glb.test"}}, "")
	return n
}

// provider returns an in-process provider for one cluster against n.
func (n *node) provider(owner string) *provider {
	return &provider{cl: newClient(n.api, testToken), zoneID: n.zone, zoneName: "glb.test", owner: owner,
		log: slog.New(slog.NewTextHandler(testWriter{n.t}, nil)).With("owner", owner)}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// call makes a request as an operator would; path is under /api/v1.
func (n *node) call(method, path string, body any, ifMatch string) (int, map[string]any, http.Header) {
	n.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, n.api+"/api/v1"+path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testToken)
	if ifMatch != "" {
		req.Header.Set("If-Match", ifMatch)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		n.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var env struct {
		Result map[string]any `json:"result"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&env)
	return resp.StatusCode, env.Result, resp.Header
}

func (n *node) must(method, path string, body any, ifMatch string) map[string]any {
	n.t.Helper()
	code, res, _ := n.call(method, path, body, ifMatch)
	if code/100 != 2 {
		n.t.Fatalf("%s %s: %d %v", method, path, code, res)
	}
	return res
}

// lbs returns the zone's load balancers by name.
func (n *node) lbs() map[string]map[string]any {
	n.t.Helper()
	out := map[string]map[string]any{}
	for _, o := range n.listAll("load_balancers") {
		out[o["name"].(string)] = o
	}
	return out
}

func (n *node) listAll(kind string) []map[string]any {
	n.t.Helper()
	req, _ := http.NewRequest("GET", n.api+"/api/v1/"+kind+"?per_page=1000", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		n.t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct {
		Result []map[string]any `json:"result"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&env)
	return env.Result
}

// writes counts the audit log's entries: every accepted write has one.
func (n *node) writes() int {
	n.t.Helper()
	req, _ := http.NewRequest("GET", n.api+"/api/v1/audit?per_page=1", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		n.t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct {
		ResultInfo struct {
			TotalCount int `json:"total_count"`
		} `json:"result_info"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&env)
	return env.ResultInfo.TotalCount
}

// dig asks n's DNS server; the answer section's data, sorted.
func (n *node) dig(name, qtype string) string {
	n.t.Helper()
	host, port, _ := strings.Cut(n.dns, ":")
	out, err := exec.Command("dig", "@"+host, "-p", port, "+norec", "+time=2", "+tries=1", "+short", name, qtype).CombinedOutput()
	if err != nil {
		n.t.Fatalf("dig %s %s: %v\n%s", name, qtype, err, out)
	}
	lines := strings.Fields(string(out))
	sort.Strings(lines)
	return strings.Join(lines, " ")
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
		time.Sleep(20 * time.Millisecond)
	}
}

func ep(name, typ, setID string, targets ...string) *endpoint {
	return &endpoint{DNSName: name, RecordType: typ, SetIdentifier: setID, Targets: targets}
}

func apply(t *testing.T, p *provider, ch changes) {
	t.Helper()
	if err := p.ApplyChanges(context.Background(), &ch); err != nil {
		t.Fatalf("apply (%s): %v", p.owner, err)
	}
}

func records(t *testing.T, p *provider) []*endpoint {
	t.Helper()
	eps, err := p.Records(context.Background())
	if err != nil {
		t.Fatalf("records (%s): %v", p.owner, err)
	}
	return eps
}

// show renders endpoints one a line for comparisons.
func show(eps []*endpoint) string {
	var lines []string
	for _, e := range eps {
		var props []string
		for _, p := range e.ProviderSpecific {
			props = append(props, p.Name+"="+p.Value)
		}
		lines = append(lines, fmt.Sprintf("%s %s %s %v %v", e.DNSName, e.RecordType, e.SetIdentifier, e.Targets, props))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func strs(v any) []string {
	var out []string
	if l, ok := v.([]any); ok {
		for _, x := range l {
			out = append(out, x.(string))
		}
	}
	return out
}
