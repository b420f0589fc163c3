package main

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestTSIGKeys: glbctl creates a key and prints its secret once, in the
// form nsupdate takes; the secret then signs a working update; list shows
// the key without it; delete removes it; a bad grant names the field.
func TestTSIGKeys(t *testing.T) {
	t.Parallel()
	n := startNode(t, "--api-token", "s3cret")
	code, z := n.call("POST", "/api/v1/zones", map[string]any{"name": "glb.example.com", "nameservers": []string{"ns1.glb.example.com"}}, "")
	if code != 201 {
		t.Fatalf("zone: %d %v", code, z)
	}
	zone := z["id"].(string)
	out := n.mustCtl(exitOK, "tsig-keys", "create", "acme", "--grant", zone+":www.glb.example.com:acme-challenge:TXT")
	m := regexp.MustCompile(`nsupdate -y (hmac-sha256:acme:\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("create printed no nsupdate line:\n%s", out)
	}
	secret := strings.TrimPrefix(m[1], "hmac-sha256:acme:")
	list := n.mustCtl(exitOK, "tsig-keys")
	if !strings.Contains(list, "acme") || !strings.Contains(list, ":www.glb.example.com:acme-challenge:TXT") || strings.Contains(list, secret) {
		t.Errorf("list:\n%s", list)
	}
	if _, err := exec.LookPath("nsupdate"); err == nil {
		host, port, _ := strings.Cut(n.dns, ":")
		cmd := exec.Command("nsupdate", "-y", m[1], "-t", "5")
		cmd.Stdin = strings.NewReader("server " + host + " " + port + "\nzone glb.example.com\nupdate add _acme-challenge.www.glb.example.com 60 TXT \"t\"\nsend\n")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("nsupdate with the printed key: %v\n%s", err, b)
		}
	}
	code, _, errOut := n.ctl("tsig-keys", "create", "bad", "--grant", zone+":www.glb.example.com:everything:SOA")
	if code != exitFailed || !strings.Contains(errOut, "grants[0].match") || !strings.Contains(errOut, "grants[0].types[0]") {
		t.Errorf("bad grant: exit %d\n%s", code, errOut)
	}
	n.mustCtl(exitOK, "tsig-keys", "delete", "acme")
	if list := n.mustCtl(exitOK, "tsig-keys", "list"); strings.Contains(list, "acme") {
		t.Errorf("after delete:\n%s", list)
	}
	n.mustCtl(exitUsage, "tsig-keys", "create")
}
