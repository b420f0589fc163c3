package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/glb-dns/glb/api/apitest"
	"github.com/glb-dns/glb/internal/testnode"
	"github.com/glb-dns/glb/pools/postgres/pgtest"
)

// glbdBin is the glbd binary built once for the end-to-end tests.
var glbdBin string

func TestMain(m *testing.M) {
	code := testnode.Run(m, []string{"dig", "dnsperf"}, testnode.Binary{Dir: "../..", Pkg: "./cmd/glbd", Flags: []string{"-race"}, Path: &glbdBin})
	closeBrowser()
	os.Exit(code)
}

// glbd is a running glbd process.
type glbd struct {
	t       *testing.T
	cmd     *exec.Cmd
	dns     string // host:port
	api     string // http://host:port
	token   string
	dataDir string
	logs    *testnode.Logs
	done    chan struct{}
	proc    *testnode.Process
	// http checks every API response against api/openapi.json.
	http *http.Client
}

// startGlbd starts glbd on ports chosen by the kernel and waits for the
// line that says where it listens.
func startGlbd(t *testing.T, dataDir string, args ...string) *glbd {
	t.Helper()
	return startGlbdWrapped(t, dataDir, nil, args...)
}

// startParallel is how most tests start: beside the other tests, one
// glbd with a data folder of its own.
func startParallel(t *testing.T, args ...string) *glbd {
	t.Helper()
	t.Parallel()
	return startGlbd(t, "", args...)
}

// startTwoNodes starts nodes a and b, each with args, on one fresh
// PostgreSQL database that a migrates.
func startTwoNodes(t *testing.T, args ...string) (a, b *glbd) {
	t.Helper()
	url := freshDatabase(t)
	a = startGlbd(t, "", append([]string{"--database-url", url, "--node", "a"}, args...)...)
	b = startGlbd(t, "", append([]string{"--database-url", url, "--node", "b", "--migrate=false"}, args...)...)
	return a, b
}

// startGlbdWrapped starts glbd as startGlbd does, through the command
// wrap (ip netns exec NAME) where it is not nil.
func startGlbdWrapped(t *testing.T, dataDir string, wrap []string, args ...string) *glbd {
	t.Helper()
	if dataDir == "" {
		dataDir = t.TempDir()
	}
	full := append([]string{"serve", "--dns-listen", "127.0.0.1:0", "--api-listen", "127.0.0.1:0",
		"--data-dir", dataDir, "--log-level", "debug"}, args...)
	full = append(append(wrap[:len(wrap):len(wrap)], glbdBin), full...)
	// GLB_DATABASE_URL is empty: only what the test passes counts.
	p, m := testnode.Start(t, "glbd", full, []string{"GLB_DATABASE_URL="}, testnode.Serving)
	return &glbd{t: t, cmd: p.Cmd, dataDir: dataDir, logs: p.Logs, done: p.Done, proc: p,
		dns: m[1], api: "http://" + m[2], http: apitest.Must(t).Client(t, nil)}
}

func (g *glbd) stop() { g.proc.Stop() }

// call makes an API request and decodes the JSON answer into out (if not
// nil); it returns the status.
func (g *glbd) call(method, path string, body any, out any) int {
	g.t.Helper()
	status, _, b := testnode.API{Base: g.api, Token: g.token, Client: g.http}.Do(g.t, method, path, body)
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			g.t.Fatalf("%s %s: %d %s: %v", method, path, status, b, err)
		}
	}
	return status
}

// must makes an API call that must succeed and returns the result object.
func (g *glbd) must(method, path string, body any) map[string]any {
	g.t.Helper()
	var out struct {
		Result map[string]any `json:"result"`
	}
	var raw map[string]any
	status := g.call(method, path, body, &raw)
	if status/100 != 2 {
		g.t.Fatalf("%s %s: status %d: %v", method, path, status, raw)
	}
	b, _ := json.Marshal(raw)
	_ = json.Unmarshal(b, &out)
	return out.Result
}

// dig queries the server and returns the answer section's data, sorted,
// and the status (NOERROR, NXDOMAIN, ...).
func dig(t *testing.T, server, name, qtype string, extra ...string) ([]string, string) {
	t.Helper()
	out, err := testnode.Dig(server, append([]string{name, qtype}, extra...)...)
	if err != nil {
		return nil, "error: " + strings.TrimSpace(string(out))
	}
	status, records := testnode.Answers(out)
	var answers []string
	for _, f := range records {
		answers = append(answers, f[len(f)-1])
	}
	sort.Strings(answers)
	return answers, status
}

func splitHostPort(t *testing.T, hp string) (string, string) {
	i := strings.LastIndex(hp, ":")
	if i < 0 {
		t.Fatalf("bad address %q", hp)
	}
	return strings.Trim(hp[:i], "[]"), hp[i+1:]
}

// eventually polls cond until it holds or the deadline passes, and returns
// how long it took.
func eventually(t *testing.T, within time.Duration, what string, cond func() (bool, string)) time.Duration {
	t.Helper()
	return testnode.Eventually(t, within, what, cond)
}

// freshDatabase creates an empty database for one test and returns its
// URL; it is dropped afterwards unless the test failed.
func freshDatabase(t *testing.T) string {
	t.Helper()
	base := pgtest.ServerURL(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("glb_e2e_%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	u, err := neturl.Parse(base)
	if err != nil || u.Scheme == "" {
		t.Fatalf("DATABASE_URL must be a postgres:// URL: %q", base)
	}
	u.Path = "/" + name
	url := u.String()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kept database %s for inspection", url)
			return
		}
		c, err := pgx.Connect(ctx, base)
		if err == nil {
			_, _ = c.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)")
			c.Close(ctx)
		}
	})
	return url
}
