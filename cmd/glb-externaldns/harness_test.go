package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/internal/testnode"
)

// glbdBin is a glbd built once: the provider is tested against the real
// server with its embedded store, over HTTP.
var glbdBin string

func TestMain(m *testing.M) {
	os.Exit(testnode.Run(m, []string{"dig"}, testnode.Binary{Dir: "../..", Pkg: "./cmd/glbd", Path: &glbdBin}))
}

const testToken = "test-bootstrap-token"

// node is a running glbd with one zone, glb.test.
type node struct {
	t    testing.TB
	api  string
	dns  string
	zone string
	glbd *testnode.Process
}

func startNode(t testing.TB, glbdArgs ...string) *node {
	t.Helper()
	g := testnode.StartGLBD(t, glbdBin, append([]string{"--api-token", testToken}, glbdArgs...)...)
	n := &node{t: t, dns: g.DNS, api: g.API, zone: "z1", glbd: g.Process}
	n.must(http.MethodPost, "/zones", map[string]any{"id": n.zone, "name": "glb.test", "nameservers": []string{"ns1.glb.test"}}, "")
	return n
}

// provider returns an in-process provider for one cluster against n.
func (n *node) provider(owner string) *provider {
	return &provider{cl: newClient(n.api, testToken), zoneID: n.zone, zoneName: "glb.test", owner: owner,
		log: slog.New(slog.NewTextHandler(testWriter{n.t}, nil)).With("owner", owner)}
}

// scopedProvider is provider with a write token of its own, scoped to
// n's zone.
func (n *node) scopedProvider(owner string) *provider {
	tok := n.must(http.MethodPost, "/tokens", map[string]any{"name": owner, "scopes": []string{"write"}, "zones": []string{n.zone}}, "")
	p := n.provider(owner)
	p.cl = newClient(n.api, tok["secret"].(string))
	return p
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// call makes a request as an operator would; path is under /api/v1.
func (n *node) call(method, path string, body any, ifMatch string) (int, map[string]any, http.Header) {
	n.t.Helper()
	status, h, b := n.client().Do(n.t, method, path, body, "If-Match", ifMatch)
	var res map[string]any
	testnode.Result(b, &res)
	return status, res, h
}

func (n *node) client() testnode.API {
	return testnode.API{Base: n.api + "/api/v1", Token: testToken}
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
	_, _, b := n.client().Do(n.t, "GET", "/"+kind+"?per_page=1000", nil)
	var list []map[string]any
	testnode.Result(b, &list)
	return list
}

// writes counts the audit log's entries: every accepted write has one.
func (n *node) writes() int {
	n.t.Helper()
	return n.client().Count(n.t, "/audit?per_page=1")
}

// dig asks n's DNS server; the answer section's data, sorted.
func (n *node) dig(name, qtype string) string {
	n.t.Helper()
	return testnode.DigShort(n.t, n.dns, name, qtype)
}

func eventually(t *testing.T, within time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	testnode.Eventually(t, within, what, cond)
}

func ep(name, typ, setID string, targets ...string) *endpoint {
	return &endpoint{DNSName: name, RecordType: typ, SetIdentifier: setID, Targets: targets}
}

func apply(t testing.TB, p *provider, ch changes) {
	t.Helper()
	if err := p.ApplyChanges(context.Background(), &ch); err != nil {
		t.Fatalf("apply (%s): %v", p.owner, err)
	}
}

func records(t testing.TB, p *provider) []*endpoint {
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

// applyAtOnce applies each provider's changes, all at once, as clusters
// syncing at the same moment do.
func applyAtOnce(t *testing.T, ps []*provider, chs func(*provider) changes) {
	t.Helper()
	errs := make(chan error, len(ps))
	for _, p := range ps {
		go func() {
			ch := chs(p)
			errs <- p.ApplyChanges(context.Background(), &ch)
		}()
	}
	for range ps {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}
