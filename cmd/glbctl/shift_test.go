package main

import (
	"strings"
	"testing"
)

// TestShiftCommands: glbctl starts a shift (the DNS answer moves), lists
// it, reports a safety refusal by rule and load balancer, and ends it
// (the answer comes back).
func TestShiftCommands(t *testing.T) {
	t.Parallel()
	n, _, _ := appliedNode(t)
	const both = "NOERROR www.glb.example.com. A 192.0.2.1; www.glb.example.com. A 192.0.2.2"
	if st, _ := n.call("PATCH", "/api/v1/load_balancers/www", map[string]any{"default_pools": []string{"web", "extra"}}, ""); st != 200 {
		t.Fatalf("patch: %d", st)
	}
	eventually(t, 5e9, "configuration", func() (bool, string) {
		got := n.dig("www.glb.example.com", "A")
		return got == both, got
	})
	out := n.mustCtl(exitOK, "shift", "start", "--pool", "web", "--lb", "www", "--reason", "bad deploy", "--duration", "2h")
	if !strings.Contains(out, "active") || !strings.Contains(out, "pool web") || !strings.Contains(out, "bad deploy") {
		t.Fatalf("start:\n%s", out)
	}
	id := strings.Fields(strings.Split(out, "\n")[1])[0]
	eventually(t, 1e9, "shift in force", func() (bool, string) {
		got := n.dig("www.glb.example.com", "A")
		return got == "NOERROR www.glb.example.com. A 198.51.100.1", got
	})
	if out := n.mustCtl(exitOK, "shift", "list", "--status", "active"); !strings.Contains(out, id) {
		t.Errorf("list:\n%s", out)
	}
	// api has a single steering pool: shifting it is refused.
	code, _, errOut := n.ctl("shift", "start", "--pool", "local", "--reason", "r", "--duration", "1h")
	if code != exitFailed || !strings.Contains(errOut, "409") || !strings.Contains(errOut, "safety rule min_serving_pools on load balancer api") {
		t.Fatalf("refusal: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := n.ctl("shift", "start", "--pool", "web", "--reason", "r"); code != exitFailed || !strings.Contains(errOut, "duration") {
		t.Errorf("without a duration: exit %d\n%s", code, errOut)
	}
	if out := n.mustCtl(exitOK, "shift", "end", id); !strings.Contains(out, "ended") {
		t.Errorf("end:\n%s", out)
	}
	// The audit row of the end names what was shifted and why.
	if out := n.mustCtl(exitOK, "audit", "--kind", "shifts"); !strings.Contains(out, `ended shift of pool web, reason "bad deploy"`) ||
		!strings.Contains(out, `started shift of pool web, reason "bad deploy"`) {
		t.Errorf("audit of the shift:\n%s", out)
	}
	eventually(t, 1e9, "shift ended", func() (bool, string) {
		got := n.dig("www.glb.example.com", "A")
		return got == both, got
	})
	n.mustCtl(exitUsage, "shift", "bogus")
}

// TestShiftRefusedByGlobalRule: a refusal by a global safety rule names
// the rule and the load balancers the shift would change.
func TestShiftRefusedByGlobalRule(t *testing.T) {
	t.Parallel()
	n, _, _ := appliedNode(t)
	if st, _ := n.call("PATCH", "/api/v1/load_balancers/www", map[string]any{"default_pools": []string{"web", "extra"}}, ""); st != 200 {
		t.Fatalf("patch: %d", st)
	}
	if st, _ := n.call("PUT", "/api/v1/safety/rules", map[string]any{"max_shifted_pools": 1}, ""); st != 200 {
		t.Fatalf("rules: %d", st)
	}
	n.mustCtl(exitOK, "shift", "start", "--pool", "web", "--lb", "www", "--reason", "bad deploy", "--duration", "2h")
	code, _, errOut := n.ctl("shift", "start", "--pool", "extra", "--lb", "www", "--reason", "r", "--duration", "1h")
	if code != exitFailed || !strings.Contains(errOut, "409") ||
		!strings.Contains(errOut, "safety rule global.max_shifted_pools across load balancers www: 2 pools would be shifted at once") {
		t.Fatalf("refusal: exit %d\n%s", code, errOut)
	}
}

// TestSafetyCommands: glbctl shows the global safety rules (all off at
// first), changes the one it is given while keeping the others, refuses a
// set that names none and passes on the API's field error, and says when
// every rule holds.
func TestSafetyCommands(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	if out := n.mustCtl(exitOK, "safety", "rules"); !strings.Contains(out, "max_shifted_pools") || !strings.Contains(out, "0 (off)") {
		t.Fatalf("rules at first:\n%s", out)
	}
	n.mustCtl(exitOK, "safety", "set", "--max-shifted-zones", "2")
	out := n.mustCtl(exitOK, "safety", "set", "--max-shifted-pools", "1")
	if !strings.Contains(out, "max_shifted_pools                   1") || !strings.Contains(out, "max_shifted_zones                   2") {
		t.Fatalf("after setting max_shifted_pools, zones kept:\n%s", out)
	}
	if code, _, errOut := n.ctl("safety", "set"); code != exitUsage || !strings.Contains(errOut, "at least one rule") {
		t.Errorf("set with no rule: %d %s", code, errOut)
	}
	if code, _, errOut := n.ctl("safety", "set", "--min-serving-lbs-percent", "101"); code != exitFailed || !strings.Contains(errOut, "min_serving_load_balancers_percent") {
		t.Errorf("set to 101 %%: %d %s", code, errOut)
	}
	if out := n.mustCtl(exitOK, "safety"); !strings.Contains(out, "Every safety rule holds.") {
		t.Errorf("safety now:\n%s", out)
	}
}
