package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/internal/testnode"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/pools/postgres/pgtest"
)

// fullConfig has every kind. The monitor checks a real TCP listener of the
// test, so that health is stable and DNS answers are the same on any node.
// www answers every origin (answers: 0) and trusts ECS, so that dig with
// +subnet reaches the country pool through the network.
const fullConfig = `# every kind glb has
zones:
  - id: example
    name: glb.example.com
    nameservers: [ns1.glb.example.com]
    soa: {rname: hostmaster.example.com}
    records:
      - {name: ns1.glb.example.com, type: A, content: 127.0.0.1}
      - {name: txt.glb.example.com, type: TXT, content: "v=spf1 -all"}
monitors:
  - id: tcp-local
    type: tcp
    port: %d
    interval: 1
    timeout: 1
networks:
  - id: oslo
    cidr: 198.51.100.0/24
    zone: zone-1
    region: WEU
    country: NO
pools:
  - id: web
    name: web
    origins:
      - {name: a, address: 192.0.2.1}
      - {name: b, address: 192.0.2.2, weight: 0.5, zone: zone-1}
  - id: extra
    name: extra
    origins:
      - {name: x, address: 198.51.100.1}
  - id: local
    name: local
    monitor: tcp-local
    origins:
      - {name: lo, address: 127.0.0.1}
load_balancers:
  - id: www
    zone: example
    name: www.glb.example.com
    default_pools: [web]
    fallback_pool: web
    answers: 0
    location_strategy: {prefer_ecs: always}
    country_pools:
      NO: [extra]
  - id: api
    zone: example
    name: api.glb.example.com
    default_pools: [local]
    fallback_pool: local
`

// checkedPort is a TCP listener the monitor of fullConfig checks.
func checkedPort(t *testing.T) int {
	t.Helper()
	return testnode.AcceptingPort(t, "127.0.0.1")
}

func fullFile(t *testing.T) (path, content string) {
	content = fmt.Sprintf(fullConfig, checkedPort(t))
	return writeFile(t, "glb.yaml", content), content
}

// applyFull applies the full file (fullFile) to n and returns its path
// and content.
func (n *node) applyFull() (file, content string) {
	n.t.Helper()
	file, content = fullFile(n.t)
	n.mustCtl(exitOK, "apply", "-f", file)
	return file, content
}

// appliedNode is a node with fullFile applied.
func appliedNode(t *testing.T, args ...string) (n *node, file, content string) {
	n = startNode(t, args...)
	file, content = n.applyFull()
	return n, file, content
}

// testApplyEveryKind: a file with every kind is applied in one go, the DNS
// answers follow it, and a second apply writes nothing.
func testApplyEveryKind(t *testing.T, n *node) {
	file, _ := fullFile(t)
	out := n.mustCtl(exitOK, "apply", "-f", file)
	for _, want := range []string{"created zones/example", "created monitors/tcp-local", "created networks/oslo",
		"created pools/web", "created pools/extra", "created pools/local", "created load_balancers/www",
		"created load_balancers/api", "8 created, 0 updated, 0 deleted, 0 unchanged"} {
		if !strings.Contains(out, want) {
			t.Errorf("apply output lacks %q:\n%s", want, out)
		}
	}
	eventually(t, 5*time.Second, "www answers from the file", func() (bool, string) {
		got := n.dig("www.glb.example.com", "A")
		return got == "NOERROR www.glb.example.com. A 192.0.2.1; www.glb.example.com. A 192.0.2.2", got
	})
	before := n.revisions()
	if len(before) != 8 {
		t.Fatalf("%d objects on the server, want 8: %v", len(before), before)
	}
	out = n.mustCtl(exitOK, "apply", "-f", file)
	if !strings.Contains(out, "0 created, 0 updated, 0 deleted, 8 unchanged") {
		t.Errorf("second apply:\n%s", out)
	}
	if after := n.revisions(); !maps.Equal(before, after) {
		t.Errorf("a second apply changed revisions:\nbefore %v\nafter  %v", before, after)
	}
	n.mustCtl(exitOK, "diff", "-f", file)
}

func TestApplyEveryKindEmbedded(t *testing.T) {
	t.Parallel()
	testApplyEveryKind(t, startNode(t))
}

func TestApplyEveryKindPostgres(t *testing.T) {
	t.Parallel()
	testApplyEveryKind(t, startNode(t, "--database-url", pgtest.URL(t)))
}

// TestDiffNamesTheField: after an edit of the file, diff names each field
// that differs with both values and exits 1; apply then writes only the
// edited object.
func TestDiffNamesTheField(t *testing.T) {
	t.Parallel()
	n, file, content := appliedNode(t)
	edited := strings.Replace(content, "weight: 0.5, zone: zone-1", "weight: 0.25, zone: zone-1", 1)
	edited = strings.Replace(edited, "fallback_pool: local\n", "fallback_pool: local\n    ttl: 60\n", 1)
	file = writeFile(t, "edited.yaml", edited)
	before := n.revisions()

	out := n.mustCtl(exitDiffers, "diff", "-f", file)
	for _, want := range []string{"~ pools/web (revision 1)", "origins[1].weight: 0.5 → 0.25",
		"~ load_balancers/api (revision 1)", "ttl: 30 → 60", "0 to create, 2 to update, 0 to delete, 6 unchanged"} {
		if !strings.Contains(out, want) {
			t.Errorf("diff output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "pools/extra") {
		t.Errorf("diff names an unchanged object:\n%s", out)
	}
	out = n.mustCtl(exitOK, "apply", "-f", file, "--dry-run")
	if !strings.Contains(out, "origins[1].weight: 0.5 → 0.25") || !strings.Contains(out, "nothing was changed") {
		t.Errorf("dry run:\n%s", out)
	}
	if after := n.revisions(); !maps.Equal(before, after) {
		t.Errorf("a dry run changed revisions: %v → %v", before, after)
	}
	out = n.mustCtl(exitOK, "apply", "-f", file)
	if !strings.Contains(out, "updated pools/web (revision 1 → 2)") || !strings.Contains(out, "0 created, 2 updated, 0 deleted, 6 unchanged") {
		t.Errorf("apply:\n%s", out)
	}
	after := n.revisions()
	for k, rev := range before {
		changed := k == "pools/web" || k == "load_balancers/api"
		if changed != (after[k] != rev) {
			t.Errorf("%s: revision %v → %v", k, rev, after[k])
		}
	}
	n.mustCtl(exitOK, "diff", "-f", file)
}

// TestPrune: an object the file no longer names is deleted with --prune
// and kept without; while the file still refers to it the server refuses
// (409) and glbctl shows that answer and who refers.
func TestPrune(t *testing.T) {
	t.Parallel()
	n, file, content := appliedNode(t)

	// Pool extra leaves the file, but www still names it.
	start := strings.Index(content, "  - id: extra")
	end := strings.Index(content, "  - id: local")
	noExtra := content[:start] + content[end:]
	stillReferred := writeFile(t, "still-referred.yaml", noExtra)
	out := n.mustCtl(exitDiffers, "diff", "-f", stillReferred, "--prune")
	if !strings.Contains(out, "- pools/extra (extra, revision 1)") || !strings.Contains(out, "refused: still referred to by load_balancer www") {
		t.Errorf("diff --prune:\n%s", out)
	}
	code, out, errOut := n.ctl("apply", "-f", stillReferred, "--prune")
	if code != exitFailed || !strings.Contains(errOut, "refusing to prune pools/extra") || !strings.Contains(errOut, "409 Conflict") ||
		!strings.Contains(errOut, "referred to by load_balancer www (www.glb.example.com)") {
		t.Fatalf("apply --prune of a referred pool: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if status, _ := n.call("GET", "/api/v1/pools/extra", nil, ""); status != http.StatusOK {
		t.Errorf("pool extra after a refused prune: GET %d", status)
	}

	// Without --prune an object missing from the file stays.
	dropped := strings.Replace(noExtra, "    country_pools:\n      NO: [extra]\n", "", 1)
	file = writeFile(t, "dropped.yaml", dropped)
	out = n.mustCtl(exitDiffers, "diff", "-f", file)
	if !strings.Contains(out, "1 on the server but not in the file, kept (--prune deletes them): pools/extra") {
		t.Errorf("diff without --prune:\n%s", out)
	}
	out = n.mustCtl(exitOK, "apply", "-f", file)
	if !strings.Contains(out, "1 updated, 0 deleted") {
		t.Errorf("apply without --prune:\n%s", out)
	}
	if status, _ := n.call("GET", "/api/v1/pools/extra", nil, ""); status != http.StatusOK {
		t.Errorf("apply without --prune deleted pool extra: GET %d", status)
	}
	out = n.mustCtl(exitOK, "apply", "-f", file, "--prune")
	if !strings.Contains(out, "deleted pools/extra") || !strings.Contains(out, "0 created, 0 updated, 1 deleted, 7 unchanged") {
		t.Errorf("apply --prune:\n%s", out)
	}
	if status, _ := n.call("GET", "/api/v1/pools/extra", nil, ""); status != http.StatusNotFound {
		t.Errorf("pool extra after --prune: GET %d, want 404", status)
	}
	n.mustCtl(exitOK, "diff", "-f", file, "--prune")

	// A load balancer, its pool and the pool's monitor leave together:
	// they are deleted referrers first.
	cut := func(s, from, to string) string {
		i, j := strings.Index(s, from), strings.Index(s, to)
		if j < 0 {
			j = len(s)
		}
		return s[:i] + s[j:]
	}
	rest := cut(cut(cut(dropped, "monitors:", "networks:"), "  - id: local", "load_balancers:"), "  - id: api", "\x00")
	out = n.mustCtl(exitOK, "apply", "-f", writeFile(t, "rest.yaml", rest), "--prune")
	if !strings.Contains(out, "deleted load_balancers/api\ndeleted pools/local\ndeleted monitors/tcp-local\n") {
		t.Errorf("apply --prune of a load balancer with its pool and monitor:\n%s", out)
	}
}

// TestExportToEmptyNode: node A's export applied to an empty node B gives
// the same export and the same DNS answers; A (PostgreSQL) and B
// (embedded) use different stores on purpose.
func TestExportToEmptyNode(t *testing.T) {
	t.Parallel()
	a := startNode(t, "--database-url", pgtest.URL(t))
	b := startNode(t)
	a.applyFull()
	exportA := a.mustCtl(exitOK, "export")
	// Export is a file apply takes, and applying it to its own node is a no-op.
	out := a.mustCtl(exitOK, "apply", "-f", writeFile(t, "a.yaml", exportA))
	if !strings.Contains(out, "0 created, 0 updated, 0 deleted, 8 unchanged") {
		t.Errorf("export of A applied to A:\n%s", out)
	}
	b.mustCtl(exitOK, "apply", "-f", writeFile(t, "a.yaml", exportA))
	if exportB := b.mustCtl(exitOK, "export"); exportB != exportA {
		t.Errorf("exports differ:\nA:\n%s\nB:\n%s", exportA, exportB)
	}
	jsonA := a.mustCtl(exitOK, "export", "-o", "json")
	if jsonB := b.mustCtl(exitOK, "export", "-o", "json"); jsonA != jsonB {
		t.Errorf("JSON exports differ:\nA:\n%s\nB:\n%s", jsonA, jsonB)
	}
	// The JSON export is a file apply takes too.
	b.mustCtl(exitOK, "diff", "-f", writeFile(t, "a.json", jsonA), "--prune")

	queries := [][]string{
		{"www.glb.example.com", "A"},
		{"www.glb.example.com", "A", "+subnet=198.51.100.0/24"},
		{"api.glb.example.com", "A"},
		{"glb.example.com", "NS"},
		{"ns1.glb.example.com", "A"},
		{"txt.glb.example.com", "TXT"},
	}
	eventually(t, 5*time.Second, "A answers from the file", func() (bool, string) {
		got := a.dig("www.glb.example.com", "A", "+subnet=198.51.100.0/24")
		return got == "NOERROR www.glb.example.com. A 198.51.100.1", got
	})
	for _, q := range queries {
		want := a.dig(q[0], q[1], q[2:]...)
		if !strings.HasPrefix(want, "NOERROR ") || want == "NOERROR " {
			t.Errorf("node A: %v answered %q", q, want)
		}
		eventually(t, 5*time.Second, fmt.Sprintf("node B answers %v as node A", q), func() (bool, string) {
			got := b.dig(q[0], q[1], q[2:]...)
			return got == want, fmt.Sprintf("A %q, B %q", want, got)
		})
	}
}

// TestConcurrentEditIsReported: an edit made through the API after the
// reviewed diff (or between glbctl's read and its write) is reported and
// kept, never overwritten.
func TestConcurrentEditIsReported(t *testing.T) {
	t.Parallel()
	n, file, content := appliedNode(t)
	edited := writeFile(t, "edited.yaml", strings.Replace(content, "weight: 0.5", "weight: 0.25", 1))
	plan := writeFile(t, "plan.json", "")

	// Between diff and apply.
	n.mustCtl(exitDiffers, "diff", "-f", edited, "--plan", plan)
	if status, _ := n.call("PATCH", "/api/v1/pools/web", map[string]any{"description": "drained by hand"}, ""); status != http.StatusOK {
		t.Fatalf("PATCH: %d", status)
	}
	before := n.revisions()
	code, out, errOut := n.ctl("apply", "-f", edited, "--plan", plan)
	if code != exitFailed || !strings.Contains(errOut, "pools/web: at revision 2 on the server, the diff saw 1") ||
		!strings.Contains(errOut, "nothing was written") {
		t.Fatalf("apply --plan after a concurrent edit: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if after := n.revisions(); !maps.Equal(before, after) {
		t.Errorf("a refused apply wrote: %v → %v", before, after)
	}
	_, web := n.call("GET", "/api/v1/pools/web", nil, "")
	if web["description"] != "drained by hand" || web["origins"].([]any)[1].(map[string]any)["weight"] != 0.5 {
		t.Errorf("pool web after the refused apply: %v", web)
	}
	// A plan of another file is refused too.
	if code, _, errOut := n.ctl("apply", "-f", file, "--plan", plan); code != exitFailed || !strings.Contains(errOut, "changed since the plan was made") {
		t.Errorf("apply --plan with another file: exit %d: %s", code, errOut)
	}

	// Between glbctl's read and its write: a proxy makes the edit when the
	// PUT arrives, before passing it on.
	target, _ := url.Parse(n.api)
	rp := httputil.NewSingleHostReverseProxy(target)
	var once sync.Once
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			once.Do(func() {
				n.call("PATCH", r.URL.Path, map[string]any{"description": "edited meanwhile"}, "")
			})
		}
		rp.ServeHTTP(w, r)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	proxied := &node{t: t, api: "http://" + ln.Addr().String(), dns: n.dns}
	code, out, errOut = proxied.ctl("apply", "-f", edited)
	if code != exitFailed || !strings.Contains(errOut, "pools/web changed on the server after glbctl read it at revision 2: not overwritten") ||
		!strings.Contains(errOut, "412") {
		t.Fatalf("apply racing an edit: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	_, web = n.call("GET", "/api/v1/pools/web", nil, "")
	if web["description"] != "edited meanwhile" || web["origins"].([]any)[1].(map[string]any)["weight"] != 0.5 {
		t.Errorf("pool web after the raced apply: %v", web)
	}
}

// TestGetExplainHealth: the read commands print tables by default and the
// API's JSON with -o json.
func TestGetExplainHealth(t *testing.T) {
	t.Parallel()
	n := startNode(t, "--api-token", "s3cret")
	file, _ := fullFile(t)
	anon := &node{t: t, api: n.api, dns: n.dns}
	if code, _, errOut := anon.ctl("apply", "-f", file); code != exitFailed || !strings.Contains(errOut, "401") {
		t.Fatalf("apply without the token: exit %d: %s", code, errOut)
	}
	// A read-only token (what a pull request's diff job needs) may diff but
	// not apply, and glbctl says which scope is missing.
	reader := n.withToken("ci-diff", "read")
	reader.mustCtl(exitDiffers, "diff", "-f", file)
	if code, _, errOut := reader.ctl("apply", "-f", file); code != exitFailed || !strings.Contains(errOut, "403") ||
		!strings.Contains(errOut, `the token lacks the scope "write"`) {
		t.Fatalf("apply with a read token: exit %d: %s", code, errOut)
	}
	n.mustCtl(exitOK, "apply", "-f", file)

	out := n.mustCtl(exitOK, "get", "pools")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "ID ") || !strings.Contains(out, "local  local  yes      tcp-local") {
		t.Errorf("get pools:\n%s", out)
	}
	out = n.mustCtl(exitOK, "get", "pool", "web")
	if !strings.Contains(out, "ORIGIN  ADDRESS    ENABLED  WEIGHT  ZONE") || !strings.Contains(out, "b       192.0.2.2  yes      0.5     zone-1") {
		t.Errorf("get pool web:\n%s", out)
	}
	for _, k := range []string{"zones", "monitors", "networks", "lb"} {
		if out := n.mustCtl(exitOK, "get", k); strings.Count(out, "\n") < 2 {
			t.Errorf("get %s:\n%s", k, out)
		}
	}
	var pool map[string]any
	if err := json.Unmarshal([]byte(n.mustCtl(exitOK, "get", "pools", "web", "-o", "json")), &pool); err != nil || pool["id"] != "web" {
		t.Errorf("get pools web -o json: %v %v", pool, err)
	}
	var list []map[string]any
	if err := json.Unmarshal([]byte(n.mustCtl(exitOK, "get", "load_balancers", "-o", "json")), &list); err != nil || len(list) != 2 {
		t.Errorf("get load_balancers -o json: %v %v", list, err)
	}
	if code, _, errOut := n.ctl("get", "pools", "nope"); code != exitFailed || !strings.Contains(errOut, "404") {
		t.Errorf("get of a missing pool: exit %d: %s", code, errOut)
	}
	if code, _, _ := n.ctl("get", "frobs"); code != exitUsage {
		t.Errorf("get of an unknown kind: exit %d", code)
	}

	eventually(t, 5*time.Second, "explain sees the network", func() (bool, string) {
		code, out, errOut := n.ctl("explain", "www", "--client", "192.0.2.9", "--ecs", "198.51.100.0/24")
		return code == exitOK && strings.Contains(out, "chosen pool    extra"), out + errOut
	})
	out = n.mustCtl(exitOK, "explain", "www", "--client", "192.0.2.9", "--ecs", "198.51.100.0/24")
	for _, want := range []string{"country NO", "country_pools.NO", "x       A     198.51.100.1", "located by 198.51.100.0/24"} {
		if !strings.Contains(out, want) {
			t.Errorf("explain lacks %q:\n%s", want, out)
		}
	}
	var ex api.Explanation
	if err := json.Unmarshal([]byte(n.mustCtl(exitOK, "explain", "www", "--client", "192.0.2.9", "-o", "json")), &ex); err != nil ||
		ex.Decision.Pool.ID != "web" || len(ex.Decision.Records) != 2 {
		t.Errorf("explain -o json: %+v %v", ex.Decision.Pool, err)
	}

	eventually(t, 10*time.Second, "health of pool local", func() (bool, string) {
		_, out, errOut := n.ctl("health", "local")
		return strings.Contains(out, "pool local (local): healthy") && strings.Contains(out, "n1    WEU     healthy"), out + errOut
	})
	var h api.PoolHealth
	if err := json.Unmarshal([]byte(n.mustCtl(exitOK, "health", "local", "-o", "json")), &h); err != nil ||
		len(h.Origins) != 1 || len(h.Origins[0].Checks) != 1 || !h.Origins[0].Checks[0].Healthy {
		t.Errorf("health -o json: %+v %v", h, err)
	}
}

// TestDocsExample: the example file of docs/glbctl.md applies to a real
// node, so the guide stays true.
func TestDocsExample(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/glbctl.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "<!-- glbctl-example -->\n```yaml\n")
	example, _, ok2 := strings.Cut(rest, "```\n<!-- /glbctl-example -->")
	if !ok || !ok2 {
		t.Fatal("docs/glbctl.md has no example between <!-- glbctl-example --> markers")
	}
	n := startNode(t)
	file := writeFile(t, "glb.yaml", example)
	n.mustCtl(exitDiffers, "diff", "-f", file)
	n.mustCtl(exitOK, "apply", "-f", file)
	n.mustCtl(exitOK, "diff", "-f", file, "--prune")
	exported := writeFile(t, "exported.yaml", n.mustCtl(exitOK, "export"))
	n.mustCtl(exitOK, "diff", "-f", exported, "--prune")
}

// TestServerRefusalNamesTheLine: what only the server can check (a name
// another object already has) is refused with the server's 400, and the
// field it names is pointed at in the file.
func TestServerRefusalNamesTheLine(t *testing.T) {
	t.Parallel()
	n, _, content := appliedNode(t)
	clash := content + "  - id: www2\n    zone: example\n    name: WWW.glb.example.com\n    default_pools: [web]\n    fallback_pool: web\n"
	line := strings.Count(content, "\n") + 3
	code, out, errOut := n.ctl("apply", "-f", writeFile(t, "clash.yaml", clash))
	want := fmt.Sprintf("clash.yaml:%d: load_balancers[2].name: \"www.glb.example.com\" is already used by load_balancer www", line)
	if code != exitFailed || !strings.Contains(errOut, "400") || !strings.Contains(errOut, want) {
		t.Fatalf("apply of a clashing name: exit %d, want a line with %q\nstdout:\n%s\nstderr:\n%s", code, want, out, errOut)
	}
}

// TestListPages: lists are read page after page to the last.
func TestListPages(t *testing.T) {
	t.Parallel()
	n, _, _ := appliedNode(t)
	cl, err := newClient(common{server: n.api})
	if err != nil {
		t.Fatal(err)
	}
	for _, per := range []int{1, 2, 3, 4} {
		cl.perPage = per
		objs, err := cl.objects(context.Background(), pools.KindPool)
		if err != nil || len(objs) != 3 {
			t.Errorf("%d per page: %d pools, %v", per, len(objs), err)
		}
	}
}
