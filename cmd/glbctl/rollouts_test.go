package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/glb-dns/glb/internal/testnode"
)

// A rollout runs on the server; glbctl starts it from a file (apply
// --staged) and steers it (rollouts).

// TestApplyStaged: apply --staged starts a rollout for a pool whose file
// changes only origin weights, writes the other changes at once, refuses
// a pool whose weights change with other fields (changing nothing), and
// glbctl rollouts lists, shows, pauses, resumes and aborts the rollout.
func TestApplyStaged(t *testing.T) {
	t.Parallel()
	n, _, content := appliedNode(t)
	mixed := strings.Replace(content, "weight: 0.5, zone: zone-1}", "weight: 0.1, zone: zone-2}", 1)
	code, _, errOut := n.ctl("apply", "-f", writeFile(t, "mixed.yaml", mixed), "--staged")
	if code != exitFailed || !strings.Contains(errOut, "pools/web: changes origins[1].zone besides origin weights") ||
		!strings.Contains(errOut, "nothing was changed") {
		t.Fatalf("weights and a zone at once: exit %d\n%s", code, errOut)
	}
	edited := strings.Replace(content, "weight: 0.5, zone: zone-1}", "weight: 0.1, zone: zone-1}", 1)
	edited = strings.Replace(edited, "answers: 0\n", "answers: 0\n    ttl: 45\n", 1)
	out := n.mustCtl(exitOK, "apply", "-f", writeFile(t, "staged.yaml", edited), "--staged", "--steps", "20,100", "--step-interval", "1h", "--reason", "canary")
	if !strings.Contains(out, "rollout ") || !strings.Contains(out, "started for pools/web") || !strings.Contains(out, "updated load_balancers/www") ||
		!strings.Contains(out, "1 rollouts started") {
		t.Fatalf("staged apply:\n%s", out)
	}
	id := strings.Fields(out[strings.Index(out, "rollout "):])[1]
	if _, web := n.call("GET", "/api/v1/pools/web", nil, ""); web["origins"].([]any)[1].(map[string]any)["weight"] != 0.5 {
		t.Fatalf("--staged wrote the weight at once: %v", web)
	}
	if out := n.mustCtl(exitOK, "rollouts", "--status", "running"); !strings.Contains(out, id) || !strings.Contains(out, "1/2") ||
		!strings.Contains(out, "20 %") || !strings.Contains(out, "b 0.5→0.1") || !strings.Contains(out, "canary") {
		t.Fatalf("list:\n%s", out)
	}
	if out := n.mustCtl(exitOK, "rollouts", "pause", id, "--reason", "look"); !strings.Contains(out, "paused") {
		t.Fatalf("pause:\n%s", out)
	}
	if code, _, errOut := n.ctl("rollouts", "pause", id); code != exitFailed || !strings.Contains(errOut, "409") {
		t.Fatalf("pause twice: exit %d\n%s", code, errOut)
	}
	n.mustCtl(exitOK, "rollouts", "resume", id)
	if out := n.mustCtl(exitOK, "rollouts", "abort", id, "--reason", "enough"); !strings.Contains(out, "aborted") || !strings.Contains(out, "enough") {
		t.Fatalf("abort:\n%s", out)
	}
	if out := n.mustCtl(exitOK, "rollouts", "show", id, "-o", "json"); !strings.Contains(out, `"state": "aborted"`) {
		t.Fatalf("show:\n%s", out)
	}
	n.mustCtl(exitUsage, "rollouts", "bogus")
}

// TestApplyStagedOrder: apply --staged --dry-run shows a load balancer's
// default_pools change and a pool's weight change as rollouts (steps and
// interval), changing nothing; apply --staged starts the order change as
// a rollout and leaves the stored order as it was; an order changed with
// other fields is refused, changing nothing; --webhook becomes the
// rollouts' webhook guard, which the server then asks.
func TestApplyStagedOrder(t *testing.T) {
	t.Parallel()
	// The webhook is on loopback, refused unless allowed.
	n, _, content := appliedNode(t, "--outbound-allow", "127.0.0.1")
	mixed := strings.Replace(content, "    default_pools: [web]\n    fallback_pool: web\n    answers: 0\n",
		"    default_pools: [extra, web]\n    fallback_pool: web\n    answers: 0\n    ttl: 45\n", 1)
	code, _, errOut := n.ctl("apply", "-f", writeFile(t, "mixed.yaml", mixed), "--staged")
	if code != exitFailed || !strings.Contains(errOut, "load_balancers/www: changes ttl besides default_pools") || !strings.Contains(errOut, "nothing was changed") {
		t.Fatalf("order and ttl at once: exit %d\n%s", code, errOut)
	}
	edited := strings.Replace(content, "    default_pools: [web]\n    fallback_pool: web\n    answers: 0\n",
		"    default_pools: [extra, web]\n    fallback_pool: web\n    answers: 0\n", 1)
	edited = strings.Replace(edited, "weight: 0.5, zone: zone-1}", "weight: 0.1, zone: zone-1}", 1)
	file := writeFile(t, "staged.yaml", edited)
	var asked atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(hook.Close)
	out := n.mustCtl(exitOK, "apply", "-f", file, "--staged", "--dry-run", "--steps", "20,100", "--step-interval", "1h", "--webhook", hook.URL)
	guarded := "steps 20,100 % every 1h, guarded by webhook " + hook.URL
	for _, want := range []string{
		"» load_balancers/www (revision 1): rollout, " + guarded + ": default_pools [web] → [extra web]",
		"» pools/web (revision 1): rollout, " + guarded + ": weights b 0.5→0.1",
		"0 to create, 0 to update, 0 to delete", ", 2 to start as rollouts", "dry run: nothing was changed",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("dry run lacks %q:\n%s", want, out)
		}
	}
	if out := n.mustCtl(exitOK, "rollouts"); strings.Contains(out, "running") {
		t.Fatalf("the dry run started rollouts:\n%s", out)
	}
	out = n.mustCtl(exitOK, "apply", "-f", file, "--staged", "--steps", "20,100", "--step-interval", "1h", "--reason", "extra first", "--webhook", hook.URL)
	if !strings.Contains(out, "started for load_balancers/www: default_pools [extra web] in steps 20,100 every 1h, guarded by webhook "+hook.URL) || !strings.Contains(out, "2 rollouts started") {
		t.Fatalf("staged apply:\n%s", out)
	}
	var rollouts []map[string]any
	_, _, b := n.client().Do(t, "GET", apiPrefix+"/rollouts", nil)
	testnode.Result(b, &rollouts)
	if len(rollouts) != 2 {
		t.Fatalf("%d rollouts stored, want 2", len(rollouts))
	}
	for _, r := range rollouts {
		if g, _ := r["guards"].(map[string]any); g["webhook"] != hook.URL {
			t.Fatalf("a rollout started with guards %v, want the webhook %s", g, hook.URL)
		}
	}
	if _, www := n.call("GET", "/api/v1/load_balancers/www", nil, ""); len(www["default_pools"].([]any)) != 1 {
		t.Fatalf("--staged wrote the order at once: %v", www["default_pools"])
	}
	if out := n.mustCtl(exitOK, "rollouts", "--status", "running"); !strings.Contains(out, "load_balancers/www") ||
		!strings.Contains(out, "default_pools [web]→[extra web]") || !strings.Contains(out, "pools/web") {
		t.Fatalf("list:\n%s", out)
	}
	if asked.Load() == 0 {
		t.Fatal("the webhook --webhook named was never asked")
	}
}
