package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/internal/testnode"
)

// glbdBin is a glbd built once for the end-to-end tests: glbctl is tested
// against the real server, over HTTP.
var glbdBin string

func TestMain(m *testing.M) {
	os.Exit(testnode.Run(m, []string{"dig"}, testnode.Binary{Dir: "../..", Pkg: "./cmd/glbd", Path: &glbdBin}))
}

// node is a running glbd.
type node struct {
	t     *testing.T
	api   string // http://host:port
	dns   string // host:port
	token string
}

// startNode starts glbd as testnode.StartGLBD does (the embedded store
// unless args name a database); args come after.
func startNode(t *testing.T, args ...string) *node {
	t.Helper()
	g := testnode.StartGLBD(t, glbdBin, args...)
	n := &node{t: t, dns: g.DNS, api: g.API}
	for i, a := range args {
		if a == "--api-token" {
			n.token = args[i+1]
		}
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
	status, _, b := n.client().Do(n.t, method, path, body, "If-Match", ifMatch)
	var res map[string]any
	testnode.Result(b, &res)
	return status, res
}

func (n *node) client() testnode.API { return testnode.API{Base: n.api, Token: n.token} }

// withToken creates a token named name with scopes through n and returns
// n as a client holding that token instead.
func (n *node) withToken(name string, scopes ...string) *node {
	n.t.Helper()
	status, tok := n.call("POST", "/api/v1/tokens", map[string]any{"name": name, "scopes": scopes}, "")
	secret, _ := tok["secret"].(string)
	if status != http.StatusCreated || secret == "" {
		n.t.Fatalf("create token %s: %d %v", name, status, tok)
	}
	return &node{t: n.t, api: n.api, dns: n.dns, token: secret}
}

// revisions returns every object's revision, by "kind/id".
func (n *node) revisions() map[string]float64 {
	n.t.Helper()
	out := map[string]float64{}
	for _, k := range applyOrder {
		var list []map[string]any
		_, _, b := n.client().Do(n.t, "GET", apiPrefix+"/"+string(k)+"?per_page=1000", nil)
		testnode.Result(b, &list)
		for _, o := range list {
			out[string(k)+"/"+o["id"].(string)] = o["revision"].(float64)
		}
	}
	return out
}

// dig asks n's DNS server and returns the status and the answer section's
// records (owner, type and data), sorted.
func (n *node) dig(name, qtype string, extra ...string) string {
	n.t.Helper()
	out, err := testnode.Dig(n.dns, append([]string{name, qtype}, extra...)...)
	if err != nil {
		n.t.Fatalf("dig %s %s: %v\n%s", name, qtype, err, out)
	}
	status, records := testnode.Answers(out)
	var answers []string
	for _, f := range records {
		// Owner, type and data; the TTL is left out.
		answers = append(answers, f[0]+" "+f[3]+" "+strings.Join(f[4:], " "))
	}
	sort.Strings(answers)
	return status + " " + strings.Join(answers, "; ")
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, within time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	testnode.Eventually(t, within, what, cond)
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
