package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/glb-dns/glb/pools"
)

// TestAuditAndScopedTokens: glbctl works with a scoped token (a read token
// reads the audit log but cannot apply) and shows who changed what.
func TestAuditAndScopedTokens(t *testing.T) {
	t.Parallel()
	n := startNode(t, "--api-token", "s3cret")
	n.applyFull()

	reader := n.withToken("dashboard", "read")

	out := reader.mustCtl(exitOK, "audit", "--kind", "pools")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "TIME ") || !strings.Contains(lines[1], "bootstrap  POST    create  pools") {
		t.Errorf("glbctl audit --kind pools:\n%s", out)
	}
	var es []pools.AuditEntry
	if err := json.Unmarshal([]byte(reader.mustCtl(exitOK, "audit", "--actor", "bootstrap", "--per-page", "1000", "-o", "json")), &es); err != nil || len(es) < 5 {
		t.Fatalf("audit -o json: %d entries, %v", len(es), err)
	}
	if es[0].Kind != pools.KindToken || es[0].ObjectID != "dashboard" {
		t.Errorf("newest entry: %+v", es[0])
	}
	if code, _, errOut := reader.ctl("audit", "--since", "yesterday"); code != exitFailed || !strings.Contains(errOut, "since") {
		t.Errorf("bad --since: exit %d: %s", code, errOut)
	}
}
