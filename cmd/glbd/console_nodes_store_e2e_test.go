package main

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestConsoleNodesStore: on PostgreSQL the Nodes page shows, under each
// node's name, the server the node writes to and where its follow reads
// go, as GET /nodes reports.
func TestConsoleNodesStore(t *testing.T) {
	t.Parallel()
	const admin = "nodes-store-admin"
	g := startGlbd(t, "", "--database-url", freshDatabase(t), "--api-token", admin, "--node", "pg-1")
	g.token = admin
	var nodes struct {
		Result []struct {
			Name  string `json:"name"`
			Store *struct {
				Primary string `json:"primary"`
				Follows string `json:"follows"`
			} `json:"store"`
		} `json:"result"`
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		g.call("GET", "/api/v1/nodes", nil, &nodes)
		if len(nodes.Result) == 1 && nodes.Result[0].Store != nil && nodes.Result[0].Store.Primary != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /nodes shows no store server: %+v", nodes.Result)
		}
		time.Sleep(200 * time.Millisecond)
	}
	st := nodes.Result[0].Store
	ctx := browserTab(t)
	cell := `document.querySelector('tr[data-node="pg-1"] .node-store')`
	drive(t, ctx, "sign in, the node listed", chromedp.Navigate(g.api+"/ui/#nodes"), chromedp.WaitVisible(`#token`),
		chromedp.SendKeys(`#token`, admin+kb.Enter), chromedp.WaitVisible(`#n-table`),
		waitFor(cell+`?.textContent.includes(`+jsString(st.Primary)+`)`, 10*time.Second))
	var text string
	drive(t, ctx, "read the store cell", chromedp.Text(`tr[data-node="pg-1"] .node-store`, &text))
	if !strings.Contains(text, st.Primary) || !strings.Contains(text, "follows the "+st.Follows) {
		t.Fatalf("the store cell shows %q, want %s and where it follows (%s)", text, st.Primary, st.Follows)
	}
}
