package main

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestConsoleHTTPSRecord: at phone width, a load balancer's form gives it
// an HTTPS record (RFC 9460), refusing a repeated protocol id and a port
// out of range beside their fields; dig HTTPS is then answered with the
// alpn and port typed and the A and AAAA answer as hints; unchecking
// "Answer HTTPS queries" removes the record, and dig HTTPS is NODATA.
func TestConsoleHTTPSRecord(t *testing.T) {
	g := startParallel(t)
	g.must("POST", "/api/v1/zones", map[string]any{"id": "example", "name": "glb.example.com", "nameservers": []string{"ns1.glb.example.com"},
		"records": []map[string]any{{"name": "ns1.glb.example.com", "type": "A", "content": "127.0.0.1"}}})
	g.must("POST", "/api/v1/pools", map[string]any{"id": "web", "name": "web",
		"origins": []map[string]any{{"name": "v4", "address": "192.0.2.1"}, {"name": "v6", "address": "2001:db8::1"}}})
	g.must("POST", "/api/v1/load_balancers", map[string]any{"id": "app", "zone": "example", "name": "app.glb.example.com", "ttl": 30,
		"default_pools": []string{"web"}, "fallback_pool": "web"})
	ui := g.api + "/ui/"
	ctx := browserTab(t)

	var hiddenBefore, hiddenAfter bool
	var alpnErr, portErr string
	drive(t, ctx, "an HTTPS record with bad values", chromedp.EmulateViewport(390, 844),
		chromedp.Navigate(ui+"#edit/load_balancers/app"), chromedp.WaitReady(`#f-https`),
		chromedp.Evaluate(`document.getElementById("f-https-alpn").closest(".form-row").hidden`, &hiddenBefore),
		chromedp.Click(`#f-https`),
		chromedp.Evaluate(`document.getElementById("f-https-alpn").closest(".form-row").hidden`, &hiddenAfter),
		chromedp.SendKeys(`#f-https-alpn`, "h2, h2"), chromedp.SendKeys(`#f-https-port`, "70000"),
		chromedp.Click(`#save`), waitFor(`document.getElementById("f-https-port-error").textContent !== ""`, 10*time.Second),
		chromedp.Text(`#f-https-alpn-error`, &alpnErr), chromedp.Text(`#f-https-port-error`, &portErr),
		chromedp.ScrollIntoView(`#f-https`))
	if !hiddenBefore || hiddenAfter {
		t.Errorf("the HTTPS fields hidden without a record: %v; once checked: %v", hiddenBefore, hiddenAfter)
	}
	noSideways(t, ctx, "the HTTPS record's fields")
	shot(t, ctx, "phone-lb-https")
	if !strings.HasPrefix(alpnErr, "protocol id 2: ") || !strings.Contains(alpnErr, "twice") {
		t.Errorf("alpn h2, h2: %q beside the field", alpnErr)
	}
	if !strings.Contains(portErr, "65535") {
		t.Errorf("port 70000: %q beside the field", portErr)
	}
	if lb := g.must("GET", "/api/v1/load_balancers/app", nil); lb["https"] != nil {
		t.Fatalf("a refused save stored https %v", lb["https"])
	}

	drive(t, ctx, "correct them", retype(`#f-https-alpn`, "h2,h3"), retype(`#f-https-port`, "8443"),
		chromedp.Click(`#save`), waitFor(`location.hash === "#config"`, 10*time.Second))
	var summary string
	drive(t, ctx, "the list", chromedp.Text(`[data-kind="load_balancers"] li[data-id="app"]`, &summary))
	if !strings.Contains(summary, "HTTPS record") {
		t.Errorf("the configuration list says %q", summary)
	}
	lb := g.must("GET", "/api/v1/load_balancers/app", nil)
	if want := map[string]any{"alpn": []any{"h2", "h3"}, "port": float64(8443)}; !reflect.DeepEqual(lb["https"], want) {
		t.Errorf("stored https %#v, want %#v", lb["https"], want)
	}
	// dig writes the values bare, as in alpn=h2,h3 port=8443.
	record := regexp.MustCompile(`(?m)^app\.glb\.example\.com\.\s+30\s+IN\s+HTTPS\s+1 \. alpn="?h2,h3"? port="?8443"? ipv4hint="?192\.0\.2\.1"? ipv6hint="?2001:db8::1"?$`)
	eventually(t, 10*time.Second, "dig HTTPS answers the record", func() (bool, string) {
		out := digRaw(t, g.dns, "app.glb.example.com", "HTTPS")
		return record.MatchString(out), out
	})

	// Reopened, the form shows what is stored; unchecked, the record goes.
	var alpn, port string
	var checked bool
	drive(t, ctx, "reopen", chromedp.Navigate(ui+"#edit/load_balancers/app"), chromedp.WaitVisible(`#f-https-alpn`),
		chromedp.Value(`#f-https-alpn`, &alpn), chromedp.Value(`#f-https-port`, &port), chromedp.Evaluate(`document.getElementById("f-https").checked`, &checked))
	if alpn != "h2, h3" || port != "8443" || !checked {
		t.Errorf("reopened: alpn %q, port %q, checked %v", alpn, port, checked)
	}
	drive(t, ctx, "remove the record", chromedp.Click(`#f-https`), waitFor(`document.getElementById("f-https-alpn").closest(".form-row").hidden`, 5*time.Second),
		chromedp.Click(`#save`), waitFor(`location.hash === "#config"`, 10*time.Second))
	if lb := g.must("GET", "/api/v1/load_balancers/app", nil); lb["https"] != nil {
		t.Errorf("after the removal https is %v", lb["https"])
	}
	eventually(t, 10*time.Second, "dig HTTPS is NODATA", func() (bool, string) {
		ans, status := dig(t, g.dns, "app.glb.example.com", "HTTPS")
		return status == "NOERROR" && len(ans) == 0, fmt.Sprint(status, ans)
	})
	// The A answer is still there: the removal took only the record.
	if ans, status := dig(t, g.dns, "app.glb.example.com", "A"); status != "NOERROR" || !reflect.DeepEqual(ans, []string{"192.0.2.1"}) {
		t.Errorf("dig A after the removal: %s %v", status, ans)
	}
}
