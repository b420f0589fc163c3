package main

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestConsoleMonitorTypes: the monitor form makes a dns monitor, refusing
// it first beside the field the API names (no query name), and a tls
// monitor with its server name and minimum days.
func TestConsoleMonitorTypes(t *testing.T) {
	g := startParallel(t)
	ui := g.api + "/ui/"
	ctx := browserTab(t)
	var nameErr string
	drive(t, ctx, "a dns monitor without its question", chromedp.Navigate(ui+"#edit/monitors"), chromedp.WaitVisible(`#f-query_name`),
		chromedp.SendKeys(`#f-description`, "resolver"),
		chromedp.SetValue(`#f-type`, "dns"),
		chromedp.SendKeys(`#f-query_type`, "AAAA"),
		chromedp.SetValue(`#f-protocol`, "tcp"),
		chromedp.Click(`#save`), waitFor(`document.getElementById("f-query_name-error").textContent !== ""`, 10*time.Second),
		chromedp.Text(`#f-query_name-error`, &nameErr))
	if !strings.Contains(nameErr, "required for dns monitors") {
		t.Errorf("dns monitor without query_name: %q beside the field", nameErr)
	}
	drive(t, ctx, "give it its question", chromedp.SendKeys(`#f-query_name`, "www.example.com"), chromedp.SendKeys(`#f-expected_answer`, "2001:db8::1"),
		chromedp.Click(`#save`), waitFor(`location.hash === "#config"`, 10*time.Second))

	ctx = nextTab(t, ctx)
	drive(t, ctx, "a tls monitor", chromedp.Navigate(ui+"#edit/monitors"), chromedp.WaitVisible(`#f-server_name`),
		chromedp.SendKeys(`#f-description`, "certificate"),
		chromedp.SetValue(`#f-type`, "tls"),
		chromedp.SendKeys(`#f-server_name`, "www.example.com"),
		retype(`#f-min_days_valid`, "14"),
		chromedp.Click(`#save`), waitFor(`location.hash === "#config"`, 10*time.Second))

	ctx = nextTab(t, ctx)
	drive(t, ctx, "a grpc monitor over TLS", chromedp.Navigate(ui+"#edit/monitors"), chromedp.WaitVisible(`#f-service`),
		chromedp.SendKeys(`#f-description`, "cart"),
		chromedp.SetValue(`#f-type`, "grpc"),
		retype(`#f-port`, "50051"),
		chromedp.SendKeys(`#f-service`, "shop.Cart"),
		chromedp.Click(`#f-tls`),
		chromedp.Click(`#save`), waitFor(`location.hash === "#config"`, 10*time.Second))

	ctx = nextTab(t, ctx)
	drive(t, ctx, "an icmp monitor", chromedp.Navigate(ui+"#edit/monitors"), chromedp.WaitVisible(`#f-count`),
		chromedp.SendKeys(`#f-description`, "ping"),
		chromedp.SetValue(`#f-type`, "icmp"),
		retype(`#f-count`, "5"),
		retype(`#f-max_loss`, "20"),
		chromedp.Click(`#save`), waitFor(`location.hash === "#config"`, 10*time.Second))

	var out struct {
		Result []map[string]any `json:"result"`
	}
	g.call("GET", "/api/v1/monitors", nil, &out)
	byDesc := map[string]map[string]any{}
	for _, m := range out.Result {
		byDesc[m["description"].(string)] = m
	}
	if d := byDesc["resolver"]; d == nil || d["type"] != "dns" || d["query_name"] != "www.example.com" || d["query_type"] != "AAAA" ||
		d["protocol"] != "tcp" || d["expected_answer"] != "2001:db8::1" {
		t.Errorf("the dns monitor stored: %v", d)
	}
	if c := byDesc["certificate"]; c == nil || c["type"] != "tls" || c["server_name"] != "www.example.com" || c["min_days_valid"] != float64(14) {
		t.Errorf("the tls monitor stored: %v", c)
	}
	if c := byDesc["cart"]; c == nil || c["type"] != "grpc" || c["port"] != float64(50051) || c["service"] != "shop.Cart" || c["tls"] != true {
		t.Errorf("the grpc monitor stored: %v", c)
	}
	if c := byDesc["ping"]; c == nil || c["type"] != "icmp" || c["count"] != float64(5) || c["max_loss"] != float64(20) {
		t.Errorf("the icmp monitor stored: %v", c)
	}
}
