// Package testnode runs this repository's binaries for the tests that drive
// them from outside, as an operator would: build once, start on ports the
// kernel picks and wait for the line that says where they listen, stop them
// when the test ends, and ask their API and DNS server. The tests of glbd,
// glbctl, glb-externaldns and the integration modules share it, so that a
// change to how glbd announces itself or shuts down is made in one place.
package testnode

import (
	"bufio"
	"bytes"
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
)

// Serving matches the line glbd logs once it listens; its submatches are
// the DNS and the API address.
var Serving = regexp.MustCompile(`msg="glbd serving".* dns=(\S+) api=(\S+)`)

// Build builds the main package pkg, as `go build` in dir names it, to the
// file out; flags go before -o (-race, for instance). Its output goes to
// stderr, where a TestMain's failure is read.
func Build(dir, pkg, out string, flags ...string) error {
	args := append(append([]string{"build"}, flags...), "-o", out, pkg)
	build := exec.Command("go", args...)
	build.Dir = dir
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building %s: %w", pkg, err)
	}
	return nil
}

// Binary is a program the tests run: the main package Pkg as `go build`
// in Dir names it, built with Flags; *Path is set to where it was built.
type Binary struct {
	Dir, Pkg string
	Flags    []string
	Path     *string
}

// hints say how to install a tool the tests run.
var hints = map[string]string{"dig": " (Debian/Ubuntu: apt-get install bind9-dnsutils)", "dnsperf": " (Debian/Ubuntu: apt-get install dnsperf)"}

// Run is a TestMain's body: it checks that the tools the tests run are on
// PATH, builds the binaries into a temporary directory, runs the tests and
// returns their exit code. A missing tool or a failed build is exit code 1,
// said on stderr.
func Run(m *testing.M, tools []string, bins ...Binary) int {
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			fmt.Fprintf(os.Stderr, "the tests need %s%s\n", tool, hints[tool])
			return 1
		}
	}
	dir, err := os.MkdirTemp("", "glb-test-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	for _, b := range bins {
		*b.Path = filepath.Join(dir, filepath.Base(b.Pkg))
		if err := Build(b.Dir, b.Pkg, *b.Path, b.Flags...); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}

// Logs keeps what a process writes, safe for the reader and the writer at
// once.
type Logs struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Process is a started binary whose stderr is kept in Logs; Done is closed
// once it has exited.
type Process struct {
	Cmd  *exec.Cmd
	Logs *Logs
	Done chan struct{}
}

// Start runs argv (the program first) with env added to this process's
// environment and waits up to a minute for a stderr line matching ready,
// whose submatches it returns. The process is stopped when the test ends,
// and its logs are shown if the test failed.
func Start(t testing.TB, name string, argv, env []string, ready *regexp.Regexp) (*Process, []string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p := &Process{Cmd: cmd, Logs: &Logs{}, Done: make(chan struct{})}
	found := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.Logs.Write([]byte(line + "\n"))
			if m := ready.FindStringSubmatch(line); m != nil {
				select {
				case found <- m:
				default:
				}
			}
		}
	}()
	go func() { _ = cmd.Wait(); pw.Close(); close(p.Done) }()
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("%s logs:\n%s", name, p.Logs.String())
		}
	})
	select {
	case m := <-found:
		return p, m
	case <-p.Done:
		t.Fatalf("%s exited at start:\n%s", name, p.Logs.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not start within 60s:\n%s", name, p.Logs.String())
	}
	return nil, nil
}

// Stop interrupts the process, as an operator's Ctrl-C would, and kills it
// if it has not exited 10s later. Stopping a stopped process does nothing.
func (p *Process) Stop() {
	_ = p.Cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.Done:
	case <-time.After(10 * time.Second):
		_ = p.Cmd.Process.Kill()
		<-p.Done
	}
}

// AcceptingPort listens on host, port 0, and accepts and closes every
// connection, as the origin a TCP monitor finds up; it stops listening
// when the test ends. It returns the port.
func AcceptingPort(t testing.TB, host string) int {
	t.Helper()
	return Accepting(t, host).Addr().(*net.TCPAddr).Port
}

// Accepting is AcceptingPort's listener, for a test that closes it to
// take the origin down.
func Accepting(t testing.TB, host string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln
}

// SharedPort listens on one port number on each of ips, as the origins of
// one monitor must (a monitor names a single port for all of them): a
// number taken on one of the addresses is given up for another, 20 times
// at most. The caller serves and closes the listeners.
func SharedPort(t testing.TB, ips ...string) []net.Listener {
	t.Helper()
	for range 20 {
		first, err := net.Listen("tcp", net.JoinHostPort(ips[0], "0"))
		if err != nil {
			t.Fatal(err)
		}
		_, port, _ := net.SplitHostPort(first.Addr().String())
		lns := []net.Listener{first}
		for _, ip := range ips[1:] {
			ln, err := net.Listen("tcp", net.JoinHostPort(ip, port))
			if err != nil {
				break // the port is taken on that address; draw another
			}
			lns = append(lns, ln)
		}
		if len(lns) == len(ips) {
			return lns
		}
		for _, ln := range lns {
			ln.Close()
		}
	}
	t.Fatalf("no port free on all of %v", ips)
	return nil
}

// Eventually polls cond until it holds or within has passed, and returns
// how long it took; cond's string says the state last seen, for the
// failure message. It is the one polling wait of the repository's tests,
// in-process ones included.
func Eventually(t testing.TB, within time.Duration, what string, cond func() (bool, string)) time.Duration {
	t.Helper()
	start := time.Now()
	deadline := start.Add(within)
	for {
		ok, state := cond()
		if ok {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v; last state: %s", what, within, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// API is a glbd's HTTP API as one operator reaches it.
type API struct {
	Base  string // http://host:port, and the path prefix if every path shares one
	Token string // bearer token; "" sends none
	// Client sends the requests; nil is http.DefaultClient.
	Client *http.Client
}

// Do sends body as JSON (none if nil) with the token and the header's
// name/value pairs, and returns the status, the header and the body. A
// request that gets no answer fails the test.
func (a API) Do(t testing.TB, method, path string, body any, header ...string) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, a.Base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if a.Token != "" {
		req.Header.Set("Authorization", "Bearer "+a.Token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] != "" {
			req.Header.Set(header[i], header[i+1])
		}
	}
	c := a.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// Count is the total_count of the listing at path: how many entries it
// has over all its pages.
func (a API) Count(t testing.TB, path string) int {
	t.Helper()
	_, _, b := a.Do(t, http.MethodGet, path, nil)
	var env struct {
		ResultInfo struct {
			TotalCount int `json:"total_count"`
		} `json:"result_info"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, b)
	}
	return env.ResultInfo.TotalCount
}

// Result decodes the "result" of an answer's envelope into out; an answer
// that is not such an envelope leaves out as it was.
func Result(b []byte, out any) {
	var env struct {
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(b, &env) == nil && len(env.Result) > 0 {
		_ = json.Unmarshal(env.Result, out)
	}
}

// Strings are the strings of a decoded JSON array; nil if v is not one.
func Strings(v any) []string {
	var out []string
	if l, ok := v.([]any); ok {
		for _, x := range l {
			out = append(out, x.(string))
		}
	}
	return out
}

// Dig asks the DNS server at host:port without recursion, once, waiting 2s;
// args are dig's (name, type, options).
func Dig(server string, args ...string) ([]byte, error) {
	i := strings.LastIndex(server, ":")
	if i < 0 {
		return nil, fmt.Errorf("bad address %q", server)
	}
	host, port := strings.Trim(server[:i], "[]"), server[i+1:]
	args = append([]string{"@" + host, "-p", port, "+norec", "+time=2", "+tries=1"}, args...)
	return exec.Command("dig", args...).CombinedOutput()
}

// DigShort asks as Dig does, with +short, and returns the answers' data
// sorted and joined by spaces; a failed dig fails the test.
func DigShort(t testing.TB, server, name, qtype string) string {
	t.Helper()
	out, err := Dig(server, "+short", name, qtype)
	if err != nil {
		t.Fatalf("dig %s %s: %v\n%s", name, qtype, err, out)
	}
	f := strings.Fields(string(out))
	sort.Strings(f)
	return strings.Join(f, " ")
}

var digStatus = regexp.MustCompile(`status: (\w+)`)

// Answers reads dig's output: the status (NOERROR, NXDOMAIN, ...) and the
// answer section's records, each split into its fields (owner, TTL, class,
// type, data...).
func Answers(out []byte) (string, [][]string) {
	status := ""
	if m := digStatus.FindSubmatch(out); m != nil {
		status = string(m[1])
	}
	var answers [][]string
	in := false
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, ";; ANSWER SECTION:"):
			in = true
		case strings.HasPrefix(line, ";;") || strings.TrimSpace(line) == "":
			in = false
		case in:
			answers = append(answers, strings.Fields(line))
		}
	}
	return status, answers
}
