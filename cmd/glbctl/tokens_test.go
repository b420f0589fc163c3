package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestTokens: glbctl creates a zone-scoped write token and prints its
// secret once; glbctl with that token writes its zone's objects and is
// refused another zone's and the tokens; list shows the zones and never
// the secret; delete revokes; a bad scope names the field.
func TestTokens(t *testing.T) {
	t.Parallel()
	n := startNode(t, "--api-token", "s3cret")
	for _, z := range []string{"a", "b"} {
		if code, res := n.call("POST", "/api/v1/zones", map[string]any{"id": "zone-" + z, "name": z + ".example.com", "nameservers": []string{"ns1." + z + ".example.com"}}, ""); code != 201 {
			t.Fatalf("zone %s: %d %v", z, code, res)
		}
	}
	out := n.mustCtl(exitOK, "tokens", "create", "edns", "--scope", "write", "--zone", "zone-a")
	m := regexp.MustCompile(`(?m)^(glb_\S+)$`).FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "zone(s) zone-a") {
		t.Fatalf("create printed:\n%s", out)
	}
	list := n.mustCtl(exitOK, "tokens")
	if !strings.Contains(list, "edns") || !strings.Contains(list, "zone-a") || strings.Contains(list, m[1]) {
		t.Errorf("list:\n%s", list)
	}
	scoped := &node{t: t, dns: n.dns, api: n.api, token: m[1]}
	if got := scoped.mustCtl(exitOK, "get", "zones"); !strings.Contains(got, "zone-a") || strings.Contains(got, "zone-b") {
		t.Errorf("the scoped token lists:\n%s", got)
	}
	if code, _, errOut := scoped.ctl("get", "zones", "zone-b"); code != exitFailed || !strings.Contains(errOut, "scoped to zone(s) zone-a") {
		t.Errorf("another zone: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := scoped.ctl("tokens"); code != exitFailed || !strings.Contains(errOut, "admin") {
		t.Errorf("the tokens: exit %d\n%s", code, errOut)
	}
	code, _, errOut := n.ctl("tokens", "create", "bad", "--scope", "root")
	if code != exitFailed || !strings.Contains(errOut, "scopes[0]") {
		t.Errorf("bad scope: exit %d\n%s", code, errOut)
	}
	n.mustCtl(exitUsage, "tokens", "create", "noscope")
	n.mustCtl(exitOK, "tokens", "delete", "edns")
	if code, _, _ := scoped.ctl("get", "zones"); code == exitOK {
		t.Error("a revoked token still reads")
	}
}
