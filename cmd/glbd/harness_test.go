package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/glb-dns/glb/api/apitest"
	"github.com/glb-dns/glb/pools/postgres/pgtest"
)

// glbdBin is the glbd binary built once for the end-to-end tests.
var glbdBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "glbd-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	glbdBin = filepath.Join(dir, "glbd")
	build := exec.Command("go", "build", "-race", "-o", glbdBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building glbd:", err)
		os.Exit(1)
	}
	if _, err := exec.LookPath("dig"); err != nil {
		fmt.Fprintln(os.Stderr, "the end-to-end tests need dig (Debian/Ubuntu: apt-get install bind9-dnsutils)")
		os.Exit(1)
	}
	code := m.Run()
	closeBrowser()
	os.RemoveAll(dir)
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
	logs    *syncBuffer
	done    chan struct{}
	// http checks every API response against api/openapi.json.
	http *http.Client
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var servingLine = regexp.MustCompile(`msg="glbd serving".* dns=(\S+) api=(\S+)`)

// startGlbd starts glbd on ports chosen by the kernel and waits for the
// line that says where it listens.
func startGlbd(t *testing.T, dataDir string, args ...string) *glbd {
	t.Helper()
	return startGlbdWrapped(t, dataDir, nil, args...)
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
	cmd := exec.Command(full[0], full[1:]...)
	cmd.Env = append(os.Environ(), "GLB_DATABASE_URL=") // only what the test passes
	pr, pw := io.Pipe()
	logs := &syncBuffer{}
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatalf("start glbd: %v", err)
	}
	g := &glbd{t: t, cmd: cmd, dataDir: dataDir, logs: logs, done: make(chan struct{}), http: apitest.Must(t).Client(t, nil)}
	found := make(chan [2]string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			logs.Write([]byte(line + "\n"))
			if m := servingLine.FindStringSubmatch(line); m != nil {
				select {
				case found <- [2]string{m[1], m[2]}:
				default:
				}
			}
		}
	}()
	go func() { cmd.Wait(); pw.Close(); close(g.done) }()
	t.Cleanup(func() {
		g.stop()
		if t.Failed() {
			t.Logf("glbd logs:\n%s", logs.String())
		}
	})
	select {
	case a := <-found:
		g.dns, g.api = a[0], "http://"+a[1]
	case <-g.done:
		t.Fatalf("glbd exited at start:\n%s", logs.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("glbd did not start within 60s:\n%s", logs.String())
	}
	return g
}

func (g *glbd) stop() {
	if g.cmd.Process == nil {
		return
	}
	_ = g.cmd.Process.Signal(os.Interrupt)
	select {
	case <-g.done:
	case <-time.After(10 * time.Second):
		_ = g.cmd.Process.Kill()
		<-g.done
	}
}

// call makes an API request and decodes the JSON answer into out (if not
// nil); it returns the status.
func (g *glbd) call(method, path string, body any, out any) int {
	g.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			g.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, g.api+path, rd)
	if err != nil {
		g.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if g.token != "" {
		req.Header.Set("Authorization", "Bearer "+g.token)
	}
	resp, err := g.http.Do(req)
	if err != nil {
		g.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			g.t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, b, err)
		}
	}
	return resp.StatusCode
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
	host, port := splitHostPort(t, server)
	args := append([]string{"@" + host, "-p", port, "+norec", "+time=2", "+tries=1", name, qtype}, extra...)
	out, err := exec.Command("dig", args...).CombinedOutput()
	if err != nil {
		return nil, "error: " + strings.TrimSpace(string(out))
	}
	status := ""
	if m := regexp.MustCompile(`status: (\w+)`).FindSubmatch(out); m != nil {
		status = string(m[1])
	}
	var answers []string
	inAnswer := false
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, ";; ANSWER SECTION:"):
			inAnswer = true
		case strings.HasPrefix(line, ";;") || strings.TrimSpace(line) == "":
			inAnswer = false
		case inAnswer:
			f := strings.Fields(line)
			answers = append(answers, f[len(f)-1])
		}
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
	start := time.Now()
	deadline := start.Add(within)
	last := ""
	for {
		ok, state := cond()
		if ok {
			return time.Since(start)
		}
		last = state
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v; last state: %s", what, within, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
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
