package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// runShownCommand runs the nsupdate command line the console showed, as
// written: its server line names the node's DNS listener.
func runShownCommand(t *testing.T, cmd string) (string, error) {
	t.Helper()
	out, err := exec.Command("sh", "-c", strings.Replace(cmd, "nsupdate ", "nsupdate -t 5 ", 1)).CombinedOutput()
	return string(out), err
}

// TestConsoleTSIGKeys: the console's TSIG keys page creates a key from its
// grants editor, shows the secret once with a copy button and an nsupdate
// command that, run as shown, adds the record; names the fields the API
// refuses; lists keys with what they may change; deletes a key, after
// which the same command is refused; and tells a token without admin that
// keys need one.
func TestConsoleTSIGKeys(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("nsupdate"); err != nil {
		t.Fatal("this test needs nsupdate (Debian/Ubuntu: apt-get install bind9-dnsutils)")
	}
	const admin = "tsig-console-admin"
	g := startGlbd(t, "", "--api-token", admin)
	g.token = admin
	zoneID := zoneFor(t, g)
	reader := g.must("POST", "/api/v1/tokens", map[string]any{"name": "viewer", "scopes": []string{"read"}})["secret"].(string)
	ui := g.api + "/ui/"
	ctx := browserTab(t)
	if err := chromedp.Run(ctx, cdpbrowser.GrantPermissions([]cdpbrowser.PermissionType{cdpbrowser.PermissionTypeClipboardSanitizedWrite})); err != nil {
		t.Fatal(err)
	}
	drive(t, ctx, "sign in", chromedp.Navigate(ui+"#tsig"), chromedp.WaitVisible(`#token`),
		chromedp.SendKeys(`#token`, admin+kb.Enter), chromedp.WaitVisible(`#k-none`), chromedp.WaitVisible(`#k-form`))

	// The API's refusals land next to their fields, and nothing is made.
	var nameErr, grantErr string
	drive(t, ctx, "no name", chromedp.SendKeys(`#k-g0-name`, "www.glb.example.com"), chromedp.Click(`#k-submit`),
		waitFor(`document.getElementById("k-name-error").textContent !== ""`, 5*time.Second),
		chromedp.Text(`#k-name-error`, &nameErr))
	drive(t, ctx, "outside the zone", chromedp.SendKeys(`#k-name`, "acme"), retype(`#k-g0-name`, "www.elsewhere.test"), chromedp.Click(`#k-submit`),
		waitFor(`document.getElementById("k-g0-name-error").textContent !== "" && document.getElementById("k-name-error").textContent === ""`, 5*time.Second),
		chromedp.Text(`#k-g0-name-error`, &grantErr))
	if !strings.Contains(nameErr, "required") || !strings.Contains(grantErr, "not inside zone") {
		t.Errorf("field errors: name %q, grant name %q", nameErr, grantErr)
	}
	if n := len(listTSIG(t, g)); n != 0 {
		t.Fatalf("a refused form made %d keys", n)
	}

	// The ACME case: one grant, _acme-challenge TXT, the form's default.
	var secret, cmd string
	drive(t, ctx, "create", retype(`#k-g0-name`, "www.glb.example.com"),
		chromedp.Click(`#k-submit`), chromedp.WaitVisible(`#k-secret`),
		chromedp.Value(`#k-secret-value`, &secret), chromedp.Text(`#k-nsupdate`, &cmd))
	copied, took, said := clickCopy(t, ctx, "k-copy-secret", "k-copy-secret-status")
	if took != strings.Contains(said, "Copied") || (!took && !strings.Contains(said, "refused")) {
		t.Errorf("the browser took the copy %v, and the page says %q", took, said)
	}
	shot(t, ctx, "tsig")
	phoneShot(t, ctx, "tsig")
	if len(secret) < 40 || copied != secret {
		t.Errorf("secret %q shown, %q copied", secret, copied)
	}
	host, port := splitHostPort(t, g.dns)
	for _, want := range []string{"nsupdate -y hmac-sha256:acme:" + secret + " <<'EOF'", "\nserver " + host + " " + port + "\n", "zone glb.example.com",
		`update add _acme-challenge.www.glb.example.com 60 TXT "token"`, "send"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("the command shown lacks %q:\n%s", want, cmd)
		}
	}
	if out, err := runShownCommand(t, cmd); err != nil {
		t.Fatalf("the command shown, run: %v\n%s", err, out)
	}
	if got, _ := dig(t, g.dns, "_acme-challenge.www.glb.example.com", "TXT"); len(got) != 1 || got[0] != `"token"` {
		t.Fatalf("after the command shown: TXT %v", got)
	}
	// One's own create (and the update it signed) changed no key and no
	// zone: the card does not call the list behind.
	var stale bool
	drive(t, ctx, "own create", chromedp.Evaluate(`document.getElementById("k-stale") !== null`, &stale))
	if stale {
		t.Errorf("after one's own create the card says the configuration changed meanwhile")
	}
	// A change elsewhere does not redraw the secret away: the card says
	// the list is behind, and closing it redraws the list.
	g.must("POST", "/api/v1/tsig_keys", map[string]any{"name": "made-elsewhere", "grants": []map[string]any{{"zone": zoneID, "name": "glb.example.com", "match": "subtree", "types": []string{"TXT"}}}})
	var still string
	drive(t, ctx, "change meanwhile", waitFor(`document.getElementById("k-stale") !== null`, 10*time.Second), chromedp.Value(`#k-secret-value`, &still))
	if still != secret {
		t.Fatalf("the secret on screen is %q after a change elsewhere, was %q", still, secret)
	}
	var sideways bool
	drive(t, ctx, "phone width", chromedp.EmulateViewport(390, 844),
		chromedp.Evaluate(`document.documentElement.scrollWidth > document.documentElement.clientWidth`, &sideways),
		chromedp.EmulateViewport(1280, 800))
	if sideways {
		var wide []string
		drive(t, ctx, "what is wide", chromedp.EmulateViewport(390, 844), chromedp.Evaluate(`[...document.querySelectorAll("#main *")].filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5).map(e => e.tagName + "#" + e.id + "." + e.className + " " + Math.round(e.getBoundingClientRect().right))`, &wide), chromedp.EmulateViewport(1280, 800))
		t.Errorf("at 390 px wide the page with the secret scrolls sideways: %v", wide)
	}
	var rows string
	drive(t, ctx, "listed", chromedp.Text(`#k-table tr[data-key="acme"]`, &rows))
	if !strings.Contains(rows, "TXT at _acme-challenge.www.glb.example.com (zone glb.example.com)") || !strings.Contains(rows, "hmac-sha256") {
		t.Errorf("the row of acme: %q", rows)
	}

	// The secret is gone once the page is drawn again.
	var again bool
	// The old table is marked, so that the wait is for the new drawing.
	drive(t, ctx, "closed: the list catches up", chromedp.Click(`#k-done`), chromedp.WaitVisible(`#k-table tr[data-key="made-elsewhere"]`))
	drive(t, ctx, "shown once", chromedp.Evaluate(`document.getElementById("k-table").dataset.old = "1"`, nil),
		chromedp.Navigate(ui+"#overview"), chromedp.Navigate(ui+"#tsig"),
		waitFor(`document.querySelector("#k-table:not([data-old])") !== null`, 5*time.Second), chromedp.Evaluate(`document.body.innerText.includes(`+jsString(secret)+`)`, &again))
	if again {
		t.Error("the secret is shown a second time")
	}

	// Two grants, hmac-sha512; one grant added and one removed on the way.
	drive(t, ctx, "two grants", chromedp.SendKeys(`#k-name`, "dns-ops"), chromedp.SetValue(`#k-alg`, "hmac-sha512"),
		retype(`#k-g0-name`, "app.glb.example.com"), chromedp.SetValue(`#k-g0-match`, "exact"),
		chromedp.Click(`#k-g0-types input[data-type="TXT"]`), chromedp.Click(`#k-g0-types input[data-type="A"]`), chromedp.Click(`#k-g0-types input[data-type="AAAA"]`),
		chromedp.Click(`#k-add-grant`), chromedp.Click(`#k-add-grant`), chromedp.Click(`fieldset[data-grant="1"] .remove-grant`),
		retype(`#k-g2-name`, "svc.glb.example.com"), chromedp.SetValue(`#k-g2-match`, "subtree"),
		chromedp.Click(`#k-submit`), chromedp.WaitVisible(`#k-secret`))
	if code := g.call("GET", "/api/v1/tsig_keys/dns-ops", nil, nil); code != 200 {
		var shows string
		_ = chromedp.Run(ctx, chromedp.Text(`#main`, &shows))
		t.Fatalf("dns-ops: %d; keys %v; the page shows:\n%s", code, listTSIG(t, g), shows)
	}
	k := g.must("GET", "/api/v1/tsig_keys/dns-ops", nil)
	gs := k["grants"].([]any)
	g0, g1 := gs[0].(map[string]any), gs[len(gs)-1].(map[string]any)
	if k["algorithm"] != "hmac-sha512" || len(gs) != 2 || g0["match"] != "exact" || g0["name"] != "app.glb.example.com" ||
		strings.Join(strs(g0["types"]), ",") != "A,AAAA" || g1["match"] != "subtree" || g1["name"] != "svc.glb.example.com" || strings.Join(strs(g1["types"]), ",") != "TXT" {
		t.Errorf("dns-ops as stored: %v", k)
	}

	// Delete, on the second click; the command shown before is refused.
	drive(t, ctx, "delete", chromedp.Click(`#k-done`), chromedp.Click(`tr[data-key="acme"] .delete`),
		chromedp.WaitVisible(`tr[data-key="acme"] .delete-confirm`), chromedp.Click(`tr[data-key="acme"] .delete-confirm`),
		waitFor(`document.querySelector('tr[data-key="acme"]') === null && document.getElementById("k-flash") !== null`, 5*time.Second))
	if code := g.call("GET", "/api/v1/tsig_keys/acme", nil, nil); code != 404 {
		t.Errorf("acme after delete: %d", code)
	}
	if out, err := runShownCommand(t, cmd); err == nil || !strings.Contains(out, "BADKEY") {
		t.Errorf("the command of a deleted key: %v\n%s", err, out)
	}

	// A token without admin is told why there is nothing to see.
	var msg string
	other := browserTab(t)
	drive(t, other, "read token", chromedp.Navigate(ui+"#tsig"), chromedp.WaitVisible(`#token`),
		chromedp.SendKeys(`#token`, reader+kb.Enter), chromedp.WaitVisible(`#main p.error`), chromedp.Text(`#main p.error`, &msg))
	if !strings.Contains(msg, "admin") {
		t.Errorf("a read token sees %q", msg)
	}
}

func listTSIG(t *testing.T, g *glbd) []any {
	var out struct {
		Result []any `json:"result"`
	}
	if code := g.call("GET", "/api/v1/tsig_keys", nil, &out); code != 200 {
		t.Fatalf("list keys: %d", code)
	}
	return out.Result
}

func strs(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
