package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/pools/postgres/pgtest"
)

// versionsOf lists every version of lb on n, newest first.
func (n *node) versionsOf(lb string) []pools.Version {
	n.t.Helper()
	var vs []pools.Version
	if err := json.Unmarshal([]byte(n.mustCtl(exitOK, "versions", lb, "--per-page", "1000", "-o", "json")), &vs); err != nil {
		n.t.Fatal(err)
	}
	return vs
}

// editWWW changes, in three writes, what www uses: the weights of web,
// the origin of extra (through the file), then www's country pools and
// TTL (through the API, as another operator would).
func editWWW(t *testing.T, n *node, content string) {
	t.Helper()
	edited := strings.Replace(content, "weight: 0.5", "weight: 0.25", 1)
	edited = strings.Replace(edited, "{name: x, address: 198.51.100.1}", "{name: x, address: 198.51.100.9}", 1)
	n.mustCtl(exitOK, "apply", "-f", writeFile(t, "edited.yaml", edited))
	if status, res := n.call("PATCH", "/api/v1/load_balancers/www", map[string]any{"country_pools": nil, "ttl": 60}, ""); status != 200 {
		t.Fatalf("PATCH www: %d %v", status, res)
	}
}

// TestRollbackRestoresTheExport is the acceptance of a version: after
// several changes, a rollback to the version before them gives back the
// same export, byte for byte, and the same DNS answers.
func TestRollbackRestoresTheExport(t *testing.T) {
	t.Parallel()
	n, file, content := appliedNode(t)
	before := n.mustCtl(exitOK, "export")
	vs := n.versionsOf("www")
	if len(vs) != 1 || vs[0].Version != 1 {
		t.Fatalf("www after apply: versions %+v, want only its creation", vs)
	}
	eventually(t, 5*time.Second, "www answers NO from extra", func() (bool, string) {
		got := n.dig("www.glb.example.com", "A", "+subnet=198.51.100.0/24")
		return got == "NOERROR www.glb.example.com. A 198.51.100.1", got
	})

	editWWW(t, n, content)
	vs = n.versionsOf("www")
	if len(vs) != 4 || vs[0].Version != 4 {
		t.Fatalf("www after three writes: %d versions, want 4", len(vs))
	}
	out := n.mustCtl(exitDiffers, "diff", "www", "--version", "1")
	for _, want := range []string{"~ pools/web", "origins[1].weight: 0.25 → 0.5", "~ pools/extra",
		`origins[0].address: "198.51.100.9" → "198.51.100.1"`, "~ load_balancers/www", "ttl: 60 → 30",
		"0 to create, 3 to update, 0 to delete, 0 unchanged"} {
		if !strings.Contains(out, want) {
			t.Errorf("diff www --version 1 lacks %q:\n%s", want, out)
		}
	}

	out = n.mustCtl(exitOK, "rollback", "www", "--version", "1")
	if !strings.Contains(out, "www rolled back to version 1: version 5") {
		t.Errorf("rollback: %s", out)
	}
	if after := n.mustCtl(exitOK, "export"); after != before {
		t.Errorf("export after the rollback differs from before the changes:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	n.mustCtl(exitOK, "diff", "www", "--version", "1")
	n.mustCtl(exitOK, "diff", "-f", file)
	eventually(t, 5*time.Second, "www answers NO from extra again", func() (bool, string) {
		got := n.dig("www.glb.example.com", "A", "+subnet=198.51.100.0/24")
		return got == "NOERROR www.glb.example.com. A 198.51.100.1", got
	})
	out = n.mustCtl(exitOK, "versions", "www", "--per-page", "2")
	if !strings.Contains(out, "rollback to version 1: update load_balancers/www, update pools/extra, update pools/web") {
		t.Errorf("versions www:\n%s", out)
	}
	if out := n.mustCtl(exitOK, "rollback", "www", "--version", "1"); !strings.Contains(out, "nothing written") {
		t.Errorf("second rollback: %s", out)
	}
	out = n.mustCtl(exitOK, "audit", "--kind", "rollbacks")
	if !strings.Contains(out, "rollbacks") || !strings.Contains(out, "www") {
		t.Errorf("audit --kind rollbacks:\n%s", out)
	}
	_, _, errOut := n.ctl("versions", "www", "--kind", "zones")
	if !strings.Contains(errOut, `"zones" is not a kind whose changes make versions: one of load_balancers, pools, monitors`) {
		t.Errorf("versions --kind zones: %s", errOut)
	}
	if code, _, errOut := n.ctl("rollback", "www"); code != exitUsage || !strings.Contains(errOut, "--version N") {
		t.Errorf("rollback without --version: %d %s", code, errOut)
	}
}

// TestVersionsSameOnTwoNodes: two nodes on one PostgreSQL number the same
// versions, whichever node took each write, and a rollback through one is
// a version on both.
func TestVersionsSameOnTwoNodes(t *testing.T) {
	t.Parallel()
	db := pgtest.URL(t)
	a := startNode(t, "--database-url", db)
	b := startNode(t, "--database-url", db, "--node", "n2")
	_, content := a.applyFull()
	before := a.mustCtl(exitOK, "export")
	editWWW(t, b, content)
	if status, res := a.call("PATCH", "/api/v1/pools/web", map[string]any{"minimum_origins": 2}, ""); status != 200 {
		t.Fatalf("PATCH web: %d %v", status, res)
	}
	same := func(what string, want int) {
		t.Helper()
		va, vb := a.mustCtl(exitOK, "versions", "www", "-o", "json"), b.mustCtl(exitOK, "versions", "www", "-o", "json")
		if va != vb {
			t.Errorf("%s: the nodes list different versions:\nA: %s\nB: %s", what, va, vb)
		}
		if vs := a.versionsOf("www"); len(vs) != want {
			t.Errorf("%s: %d versions, want %d", what, len(vs), want)
		}
		for n := 1; n <= want; n++ {
			path := "/api/v1/load_balancers/www/versions/" + strconv.Itoa(n)
			_, _, ba := a.client().Do(t, "GET", path, nil)
			_, _, bb := b.client().Do(t, "GET", path, nil)
			if string(ba) != string(bb) {
				t.Errorf("%s: version %d differs:\nA: %s\nB: %s", what, n, ba, bb)
			}
		}
	}
	same("after five writes", 5)
	b.mustCtl(exitOK, "rollback", "www", "--version", "1")
	same("after the rollback", 6)
	if after := a.mustCtl(exitOK, "export"); after != before {
		t.Errorf("export after the rollback through B differs from before the changes:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
