package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestCommandsAsPeopleType: the global flags go before or after the
// command; a load balancer or pool is named by id or by name, and a name
// two pools share is refused with both ids; a refusal by safety rules
// names --override.
func TestCommandsAsPeopleType(t *testing.T) {
	t.Parallel()
	n, _, _ := appliedNode(t)

	// GLB_SERVER points nowhere: only --server before the command can
	// reach the node.
	env := map[string]string{"GLB_SERVER": "http://127.0.0.1:1"}
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"--server", n.api, "--token=" + n.token, "-o", "json",
		"explain", "www.glb.example.com.", "--client", "192.0.2.9"}, func(k string) string { return env[k] }, &out, &errOut)
	if code != exitOK || !strings.Contains(out.String(), `"id": "www"`) {
		t.Fatalf("glbctl --server URL --token T -o json explain NAME: exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	if code, _, errOut := n.ctl("--reason", "x", "explain", "www"); code != exitUsage || !strings.Contains(errOut, "--reason before the command") {
		t.Errorf("a command's own flag before it: exit %d\n%s", code, errOut)
	}

	if out := n.mustCtl(exitOK, "explain", "WWW.glb.example.com", "--client", "192.0.2.9"); !strings.Contains(out, "load balancer  www (www.glb.example.com)") {
		t.Errorf("explain by name:\n%s", out)
	}
	if out := n.mustCtl(exitOK, "versions", "www.glb.example.com"); !strings.Contains(out, "load_balancers/www") {
		t.Errorf("versions by name:\n%s", out)
	}
	if out := n.mustCtl(exitOK, "get", "lb", "api.glb.example.com"); !strings.Contains(out, "api") {
		t.Errorf("get by name:\n%s", out)
	}
	// Two pools share a name: it no longer says which.
	for _, id := range []string{"dup-1", "dup-2"} {
		body := map[string]any{"id": id, "name": "dup", "origins": []map[string]any{{"name": "y", "address": "198.51.100.2"}}}
		if st, res := n.call("POST", "/api/v1/pools", body, ""); st != 201 {
			t.Fatalf("pool %s named dup: %d %v", id, st, res)
		}
	}
	if out := n.mustCtl(exitOK, "health", "web"); !strings.Contains(out, "192.0.2.1") {
		t.Errorf("health by name:\n%s", out)
	}
	if code, _, errOut := n.ctl("health", "dup"); code != exitFailed || !strings.Contains(errOut, `2 pools are named "dup"; give one of their ids: dup-1, dup-2`) {
		t.Errorf("ambiguous name: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := n.ctl("explain", "nowhere.glb.example.com", "--client", "192.0.2.9"); code != exitFailed || !strings.Contains(errOut, "404") {
		t.Errorf("unknown name: exit %d\n%s", code, errOut)
	}

	// api's one steering pool, by name: refused, and the refusal names
	// the flag that overrides it.
	code, _, eo := n.ctl("shift", "start", "--pool", "local", "--lb", "api.glb.example.com", "--reason", "r", "--duration", "1h")
	if code != exitFailed || !strings.Contains(eo, "safety rule min_serving_pools on load balancer api") ||
		!strings.Contains(eo, "--override (with an admin token) overrides the safety rules") {
		t.Fatalf("refusal: exit %d\n%s", code, eo)
	}
}

// TestAddressTyposRefusedByApply: each address that looks like an IP but
// is not one is refused with what is wrong with it, and nothing is
// created.
func TestAddressTyposRefusedByApply(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	for addr, want := range map[string]string{
		"127.0.0.1O":       `"127.0.0.1O" is not an IPv4 address: it has a letter among its numbers`,
		"127.0.0.2:18001":  `"127.0.0.2:18001" has a port (:18001); give the address alone ("127.0.0.2")`,
		"http://127.0.0.2": `"http://127.0.0.2" is a URL; give the address alone ("127.0.0.2")`,
		" 127.0.0.2 ":      `" 127.0.0.2 " has spaces around it; send "127.0.0.2"`,
	} {
		file := writeFile(t, "pools.yaml", "pools:\n  - id: p\n    name: p\n    origins:\n      - {name: a, address: \""+addr+"\"}\n")
		code, _, errOut := n.ctl("apply", "-f", file)
		if code != exitFailed || !strings.Contains(errOut, "origins[0].address: "+want) {
			t.Errorf("address %q: exit %d\n%s", addr, code, errOut)
		}
	}
	if out := n.mustCtl(exitOK, "get", "pools"); strings.Contains(out, "127.0.0") {
		t.Errorf("a pool was stored:\n%s", out)
	}
	// A hostname origin is shown as the CNAME it is answered with.
	n.mustCtl(exitOK, "apply", "-f", writeFile(t, "host.yaml", "pools:\n  - id: p\n    name: p\n    origins:\n      - {name: a, address: origin.example.net}\n"))
	if out := n.mustCtl(exitOK, "get", "pools", "p"); !strings.Contains(out, "origin.example.net (CNAME)") {
		t.Errorf("hostname origin:\n%s", out)
	}
}
