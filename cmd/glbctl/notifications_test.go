package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/glb-dns/glb/internal/tabledns"
)

// TestNotifications: glbctl applies a file of subscriptions whose secrets
// come from the environment, prints a new standard subscription's
// signing secret once, changes nothing the second time, refuses a secret
// written in the file and an unset variable, and prunes.
func TestNotifications(t *testing.T) {
	t.Parallel()
	// The receivers' names resolve, through a DNS server the test runs, to
	// a public documentation address: glbd checks where a URL leads.
	ns := tabledns.Start(t)
	for _, name := range []string{"hooks.example.com", "events.example.com", "hooks.slack.example.com"} {
		ns.Set(name, "192.0.2.10")
	}
	n := startNode(t, "--outbound-resolver", ns.Addr)
	env := map[string]string{"GLB_SERVER": n.api, "PD_KEY": "R0UTINGKEY0123456789", "SLACK_URL": "https://hooks.slack.example.com/services/T0/B0/XyZ"}
	ctl := func(want int, args ...string) (string, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := run(context.Background(), args, func(k string) string { return env[k] }, &out, &errOut); code != want {
			t.Fatalf("glbctl %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out.String(), errOut.String())
		}
		return out.String(), errOut.String()
	}
	file := writeFile(t, "notifications.yaml", `notifications:
  - name: oncall
    url: https://hooks.example.com/glb
    events: [origin_health, pool_health, failover]
  - name: pager
    url: https://events.example.com/v2/enqueue
    format: pagerduty
    events: [failover]
    routing_key_env: PD_KEY
  - name: chat
    format: slack
    url_env: SLACK_URL
    events: [shift, config]
`)
	out, _ := ctl(exitOK, "notifications", "apply", "-f", file)
	if strings.Count(out, "create notification") != 3 || !strings.Contains(out, "signing secret of oncall") || !strings.Contains(out, "whsec_") {
		t.Fatalf("first apply:\n%s", out)
	}
	if strings.Contains(out, "R0UTINGKEY") {
		t.Fatalf("apply printed the routing key:\n%s", out)
	}
	if out, _ := ctl(exitOK, "notifications", "apply", "-f", file); strings.TrimSpace(out) != "" {
		t.Fatalf("second apply changed something:\n%s", out)
	}
	list, _ := ctl(exitOK, "notifications")
	for _, want := range []string{"oncall", "pagerduty", "failover", "https://hooks.slack.example.com/…"} {
		if !strings.Contains(list, want) {
			t.Errorf("list lacks %q:\n%s", want, list)
		}
	}
	if strings.Contains(list, "XyZ") {
		t.Errorf("list shows the Slack URL's path:\n%s", list)
	}
	bad := writeFile(t, "bad.yaml", `notifications:
  - name: pager
    url: https://events.example.com/v2/enqueue
    format: pagerduty
    events: [failover]
    routing_key: R0UTINGKEY0123456789
  - name: other
    url_env: NOT_SET
    events: [config]
`)
	_, errOut := ctl(exitFailed, "notifications", "apply", "-f", bad)
	if !strings.Contains(errOut, "routing_key_env") || !strings.Contains(errOut, "NOT_SET is not set") {
		t.Errorf("bad file:\n%s", errOut)
	}
	one := writeFile(t, "one.yaml", "notifications:\n  - name: oncall\n    url: https://hooks.example.com/glb2\n    events: [failover]\n")
	out, _ = ctl(exitOK, "notifications", "apply", "-f", one, "--prune", "--dry-run")
	if !strings.Contains(out, "would update notification oncall") || strings.Count(out, "would delete") != 2 {
		t.Fatalf("dry run:\n%s", out)
	}
	ctl(exitOK, "notifications", "apply", "-f", one, "--prune")
	list, _ = ctl(exitOK, "notifications")
	if strings.Contains(list, "pager") || strings.Contains(list, "chat") || !strings.Contains(list, "oncall") {
		t.Errorf("after prune:\n%s", list)
	}
	ctl(exitOK, "notifications", "test", "oncall")
	if out, _ := ctl(exitOK, "notifications", "deliveries", "oncall"); !strings.Contains(out, "test") || !strings.Contains(out, "pending") && !strings.Contains(out, "delivered") {
		t.Errorf("deliveries:\n%s", out)
	}
	ctl(exitFailed, "notifications", "test", "nope")
}
