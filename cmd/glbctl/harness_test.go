package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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

// glbdBin is a glbd built once for the end-to-end tests: glbctl is tested
// against the real server, over HTTP.
var glbdBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "glbctl-e2e")
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
		fmt.Fprintln(os.Stderr, "the end-to-end tests need dig (Debian/Ubuntu: apt-get install bind9-dnsutils)")
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// node is a running glbd.
type node struct {
	t     *testing.T
	api   string // http://host:port
	dns   string // host:port
	token string
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

// startNode starts glbd on ports the kernel picks, with the embedded store
// unless args name a database, and waits for the line saying where it
// listens.
func startNode(t *testing.T, args ...string) *node {
	t.Helper()
	full := append([]string{"serve", "--dns-listen", "127.0.0.1:0", "--api-listen", "127.0.0.1:0",
		"--data-dir", t.TempDir(), "--node", "n1", "--region", "WEU"}, args...)
	cmd := exec.Command(glbdBin, full...)
	cmd.Env = append(os.Environ(), "GLB_DATABASE_URL=", "GLB_API_TOKEN=")
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
	for i, a := range full {
		if a == "--api-token" {
			n.token = full[i+1]
		}
	}
	select {
	case a := <-found:
		n.dns, n.api = a[0], "http://"+a[1]
	case <-done:
		t.Fatalf("glbd exited at start:\n%s", logs.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("glbd did not start within 60s:\n%s", logs.String())
	}
	return n
}

// ctl runs glbctl in process against n and returns its exit status and
// outputs.
func (n *node) ctl(args ...string) (code int, stdout, stderr string) {
	n.t.Helper()
	env := map[string]string{"GLB_SERVER": n.api, "GLB_API_TOKEN": n.token}
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, func(k string) string { return env[k] }, &out, &errOut)
	return code, out.String(), errOut.String()
}

// mustCtl runs glbctl and fails the test unless it exits with want.
func (n *node) mustCtl(want int, args ...string) string {
	n.t.Helper()
	code, out, errOut := n.ctl(args...)
	if code != want {
		n.t.Fatalf("glbctl %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, out, errOut)
	}
	return out
}

// call makes a request straight to the API (as another operator would)
// and returns the status and the decoded result.
func (n *node) call(method, path string, body any, ifMatch string) (int, map[string]any) {
	n.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, n.api+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if ifMatch != "" {
		req.Header.Set("If-Match", ifMatch)
	}
	if n.token != "" {
		req.Header.Set("Authorization", "Bearer "+n.token)
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
	return resp.StatusCode, env.Result
}

// revisions returns every object's revision, by "kind/id".
func (n *node) revisions() map[string]float64 {
	n.t.Helper()
	out := map[string]float64{}
	for _, k := range applyOrder {
		var env struct {
			Result []map[string]any `json:"result"`
		}
		req, _ := http.NewRequest("GET", n.api+apiPrefix+"/"+string(k)+"?per_page=1000", nil)
		if n.token != "" {
			req.Header.Set("Authorization", "Bearer "+n.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			n.t.Fatal(err)
		}
		_ = json.NewDecoder(resp.Body).Decode(&env)
		resp.Body.Close()
		for _, o := range env.Result {
			out[string(k)+"/"+o["id"].(string)] = o["revision"].(float64)
		}
	}
	return out
}

// dig asks n's DNS server and returns the status and the answer section's
// records (owner, type and data), sorted.
func (n *node) dig(name, qtype string, extra ...string) string {
	n.t.Helper()
	host, port, _ := strings.Cut(n.dns, ":")
	args := append([]string{"@" + host, "-p", port, "+norec", "+time=2", "+tries=1", name, qtype}, extra...)
	out, err := exec.Command("dig", args...).CombinedOutput()
	if err != nil {
		n.t.Fatalf("dig %s %s: %v\n%s", name, qtype, err, out)
	}
	status := ""
	if m := regexp.MustCompile(`status: (\w+)`).FindSubmatch(out); m != nil {
		status = string(m[1])
	}
	var answers []string
	in := false
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, ";; ANSWER SECTION:"):
			in = true
		case strings.HasPrefix(line, ";;") || strings.TrimSpace(line) == "":
			in = false
		case in:
			f := strings.Fields(line)
			// Owner, type and data; the TTL is left out.
			answers = append(answers, f[0]+" "+f[3]+" "+strings.Join(f[4:], " "))
		}
	}
	sort.Strings(answers)
	return status + " " + strings.Join(answers, "; ")
}

// eventually polls cond until it holds or the deadline passes.
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

// writeFile writes a configuration file for one test.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
