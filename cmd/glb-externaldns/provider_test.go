package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/internal/testnode"
)

// Two clusters publish one name: each gets its pool, the load balancer
// the first one made lists both in the order they came, the first is the
// fallback, DNS answers from the first, and each cluster sees only its
// own endpoints.
func TestTwoClustersShareOneName(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	a, b := n.provider("eu"), n.provider("us")
	apply(t, a, changes{Create: []*endpoint{ep("app.glb.test", "A", "eu", "192.0.2.1")}})
	apply(t, b, changes{Create: []*endpoint{ep("app.glb.test", "A", "us", "198.51.100.1"), ep("app.glb.test", "AAAA", "us", "2001:db8::1")}})

	lb := n.lbs()["app.glb.test"]
	if lb == nil {
		t.Fatal("no load balancer for app.glb.test")
	}
	pa, pb := poolIDFor("eu", "app.glb.test", "eu"), poolIDFor("us", "app.glb.test", "us")
	if got := testnode.Strings(lb["default_pools"]); !slices.Equal(got, []string{pa, pb}) {
		t.Errorf("default pools %v, want [%s %s]", got, pa, pb)
	}
	if lb["fallback_pool"] != pa || lb["owner"] != lbOwner {
		t.Errorf("fallback %v owner %v, want %s and %s", lb["fallback_pool"], lb["owner"], pa, lbOwner)
	}
	pool := n.must(http.MethodGet, "/pools/"+pb, nil, "")
	if pool["owner"] != "external-dns:us" {
		t.Errorf("pool owner %v", pool["owner"])
	}
	for _, o := range pool["origins"].([]any) {
		if o.(map[string]any)["owner"] != "external-dns:us" {
			t.Errorf("origin %v not marked as the cluster's", o)
		}
	}
	if got, want := show(records(t, a)), "app.glb.test A eu [192.0.2.1] []"; got != want {
		t.Errorf("eu records:\n%s\nwant\n%s", got, want)
	}
	if got, want := show(records(t, b)), "app.glb.test A us [198.51.100.1] []\napp.glb.test AAAA us [2001:db8::1] []"; got != want {
		t.Errorf("us records:\n%s\nwant\n%s", got, want)
	}
	eventually(t, 10*time.Second, "DNS answers from the first cluster", func() (bool, string) {
		got := n.dig("app.glb.test", "A")
		return got == "192.0.2.1", got
	})
}

// Removing one cluster's endpoints removes its pool and only it; the
// fallback moves to the pool left; the last cluster leaving removes the
// load balancer the provider made.
func TestRemovingOneClusterRemovesOnlyItsPool(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	a, b := n.provider("eu"), n.provider("us")
	ea, eb := ep("app.glb.test", "A", "eu", "192.0.2.1", "192.0.2.2"), ep("app.glb.test", "A", "us", "198.51.100.1")
	apply(t, a, changes{Create: []*endpoint{ea}})
	apply(t, b, changes{Create: []*endpoint{eb}})
	pb := poolIDFor("us", "app.glb.test", "us")
	before := n.must(http.MethodGet, "/pools/"+pb, nil, "")

	apply(t, a, changes{Delete: []*endpoint{ea}})
	lb := n.lbs()["app.glb.test"]
	if got := testnode.Strings(lb["default_pools"]); !slices.Equal(got, []string{pb}) || lb["fallback_pool"] != pb {
		t.Errorf("after eu left: default pools %v fallback %v, want [%s] and %s", got, lb["fallback_pool"], pb, pb)
	}
	if code, _, _ := n.call(http.MethodGet, "/pools/"+poolIDFor("eu", "app.glb.test", "eu"), nil, ""); code != http.StatusNotFound {
		t.Errorf("eu's pool: GET answers %d, want 404", code)
	}
	after := n.must(http.MethodGet, "/pools/"+pb, nil, "")
	if after["revision"] != before["revision"] {
		t.Errorf("us's pool was written: revision %v → %v", before["revision"], after["revision"])
	}
	if got := show(records(t, a)); got != "" {
		t.Errorf("eu still has records: %s", got)
	}
	apply(t, b, changes{Delete: []*endpoint{eb}})
	if lb := n.lbs()["app.glb.test"]; lb != nil {
		t.Errorf("the load balancer the provider made outlived its last pool: %v", lb)
	}
}

// An operator's load balancer is joined, not taken over: its steering,
// fallback and own pools stay, and stay through the operator's changes
// made between syncs; leaving takes out only the cluster's pool.
func TestJoinsOperatorsLoadBalancer(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	n.must(http.MethodPost, "/pools", map[string]any{"id": "onprem", "name": "onprem",
		"origins": []any{map[string]any{"name": "dc1", "address": "203.0.113.1"}}}, "")
	n.must(http.MethodPost, "/load_balancers", map[string]any{"id": "app", "zone": n.zone, "name": "app.glb.test",
		"default_pools": []string{"onprem"}, "fallback_pool": "onprem", "steering_policy": "random"}, "")
	a, b := n.provider("eu"), n.provider("us")
	ea := ep("app.glb.test", "A", "eu", "192.0.2.1")
	apply(t, a, changes{Create: []*endpoint{ea}})
	pa, pb := poolIDFor("eu", "app.glb.test", "eu"), poolIDFor("us", "app.glb.test", "us")

	// The operator changes steering and fallback between syncs.
	n.must(http.MethodPatch, "/load_balancers/app", map[string]any{"steering_policy": "off", "fallback_pool": pa}, "")
	apply(t, b, changes{Create: []*endpoint{ep("app.glb.test", "A", "us", "198.51.100.1")}})
	lb := n.must(http.MethodGet, "/load_balancers/app", nil, "")
	if got := testnode.Strings(lb["default_pools"]); !slices.Equal(got, []string{"onprem", pa, pb}) {
		t.Errorf("default pools %v, want [onprem %s %s]", got, pa, pb)
	}
	if lb["steering_policy"] != "off" || lb["fallback_pool"] != pa || lb["owner"] != nil {
		t.Errorf("operator's settings lost: steering %v fallback %v owner %v", lb["steering_policy"], lb["fallback_pool"], lb["owner"])
	}
	// The operator's fallback is eu's pool: eu may not pull it away.
	err := a.ApplyChanges(context.Background(), &changes{Delete: []*endpoint{ea}})
	if err == nil || !strings.Contains(err.Error(), "fallback pool of load balancer app") {
		t.Fatalf("leaving while the operator's fallback: %v, want an error naming the fallback", err)
	}
	n.must(http.MethodPatch, "/load_balancers/app", map[string]any{"fallback_pool": "onprem"}, "")
	apply(t, a, changes{Delete: []*endpoint{ea}})
	lb = n.must(http.MethodGet, "/load_balancers/app", nil, "")
	if got := testnode.Strings(lb["default_pools"]); !slices.Equal(got, []string{"onprem", pb}) || lb["steering_policy"] != "off" {
		t.Errorf("after eu left: default pools %v steering %v", got, lb["steering_policy"])
	}
}

// With webhook/glb-pool the origins go into an operator's pool beside its
// own, and leave it alone when removed.
func TestOriginsInOperatorsPool(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	n.must(http.MethodPost, "/pools", map[string]any{"id": "edge", "name": "edge",
		"origins": []any{map[string]any{"name": "dc1", "address": "203.0.113.1", "zone": "z1"}}}, "")
	a := n.provider("eu")
	e := ep("app.glb.test", "A", "eu", "192.0.2.1")
	e.ProviderSpecific = []property{{propPool, "edge"}, {propWeight, "0.5"}}
	apply(t, a, changes{Create: []*endpoint{e}})
	pool := n.must(http.MethodGet, "/pools/edge", nil, "")
	var names []string
	for _, o := range pool["origins"].([]any) {
		names = append(names, o.(map[string]any)["name"].(string))
	}
	if !slices.Equal(names, []string{"dc1", "eu/192.0.2.1"}) || pool["owner"] != nil {
		t.Errorf("pool edge: origins %v owner %v", names, pool["owner"])
	}
	if got, want := show(records(t, a)), "app.glb.test A eu [192.0.2.1] [webhook/glb-pool=edge webhook/glb-weight=0.5]"; got != want {
		t.Errorf("records:\n%s\nwant\n%s", got, want)
	}
	// The operator may not lose its last-but-ours origin's settings.
	e2 := ep("app.glb.test", "A", "eu", "192.0.2.9")
	e2.ProviderSpecific = e.ProviderSpecific
	apply(t, a, changes{UpdateOld: []*endpoint{e}, UpdateNew: []*endpoint{e2}})
	pool = n.must(http.MethodGet, "/pools/edge", nil, "")
	first := pool["origins"].([]any)[0].(map[string]any)
	if first["name"] != "dc1" || first["zone"] != "z1" || len(pool["origins"].([]any)) != 2 {
		t.Errorf("operator's origin changed: %v", pool["origins"])
	}
	// The load balancer was made for the pool; a pool of the operator's
	// stays in it (the operator decides), its own origin untouched.
	apply(t, a, changes{Delete: []*endpoint{e2}})
	pool = n.must(http.MethodGet, "/pools/edge", nil, "")
	if got := len(pool["origins"].([]any)); got != 1 {
		t.Errorf("after leaving, pool edge has %d origins, want the operator's 1", got)
	}
}

// What AdjustEndpoints makes of desired endpoints is what Records reports
// after they are applied, so that a cluster with nothing new plans
// nothing.
func TestAdjustedEndpointsMatchRecords(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	n.must(http.MethodPost, "/monitors", map[string]any{"id": "http", "type": "http"}, "")
	n.must(http.MethodPost, "/monitors", map[string]any{"id": "tcp", "type": "tcp", "port": 443}, "")
	a := n.provider("eu")
	a.monitor = "http"
	desired := []*endpoint{
		{DNSName: "App.glb.test.", RecordType: "A", SetIdentifier: "eu", Targets: []string{"192.0.2.2", "192.0.2.1"},
			ProviderSpecific: []property{{propWeight, "0.50"}, {propRegion, "weu"}, {"aws/evaluate-target-health", "true"}, {propMonitor, "http"}}},
		{DNSName: "b.glb.test", RecordType: "A", SetIdentifier: "eu", Targets: []string{"192.0.2.3"},
			ProviderSpecific: []property{{propWeight, "1"}, {propMonitor, "tcp"}}},
		{DNSName: "static.glb.test", RecordType: "A", Targets: []string{"192.0.2.7"}},
	}
	adjusted := a.AdjustEndpoints(desired)
	apply(t, a, changes{Create: adjusted})
	if got, want := show(records(t, a)), show(adjusted); got != want {
		t.Errorf("records:\n%s\nadjusted desired:\n%s", got, want)
	}
	if pool := n.must(http.MethodGet, "/pools/"+poolIDFor("eu", "b.glb.test", "eu"), nil, ""); pool["monitor"] != "tcp" {
		t.Errorf("b's pool monitor %v, want tcp", pool["monitor"])
	}
	lb := n.lbs()["app.glb.test"]
	if got := testnode.Strings(lb["region_pools"].(map[string]any)["WEU"]); !slices.Equal(got, []string{poolIDFor("eu", "app.glb.test", "eu")}) {
		t.Errorf("region pools %v", lb["region_pools"])
	}
	// Applying the same again writes nothing.
	w := n.writes()
	apply(t, a, changes{UpdateOld: records(t, a), UpdateNew: a.AdjustEndpoints(desired)})
	if got := n.writes(); got != w {
		t.Errorf("an unchanged apply wrote %d times", got-w)
	}
}

// Plain records go to the zone's static records, marked; an operator's
// records and another cluster's stay as they are.
func TestPlainRecordsAreStaticRecords(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	n.must(http.MethodPatch, "/zones/"+n.zone, map[string]any{"records": []any{
		map[string]any{"name": "www.glb.test", "type": "A", "content": "203.0.113.5"}}}, "")
	a, b := n.provider("eu"), n.provider("us")
	ea := &endpoint{DNSName: "db.glb.test", RecordType: "A", Targets: []string{"192.0.2.1", "192.0.2.2"}, RecordTTL: 60}
	apply(t, a, changes{Create: []*endpoint{ea}})
	apply(t, b, changes{Create: []*endpoint{{DNSName: "cache.glb.test", RecordType: "CNAME", Targets: []string{"db.glb.test"}}}})
	if got, want := show(records(t, a)), "db.glb.test A  [192.0.2.1 192.0.2.2] []"; got != want {
		t.Errorf("eu records %q, want %q", got, want)
	}
	eventually(t, 10*time.Second, "the static record answers", func() (bool, string) {
		got := n.dig("db.glb.test", "A")
		return got == "192.0.2.1 192.0.2.2", got
	})
	apply(t, a, changes{Delete: []*endpoint{ea}})
	z := n.must(http.MethodGet, "/zones/"+n.zone, nil, "")
	var got []string
	for _, r := range z["records"].([]any) {
		m := r.(map[string]any)
		got = append(got, fmt.Sprint(m["name"], " ", m["type"], " ", m["owner"]))
	}
	if want := []string{"www.glb.test A <nil>", "cache.glb.test CNAME external-dns:us"}; !slices.Equal(got, want) {
		t.Errorf("zone records %v, want %v", got, want)
	}
}

// Two clusters applying at once, each joining the same load balancers
// and an operator rewriting their steering meanwhile: the If-Match
// retries lose no one's change.
func TestConcurrentClustersLoseNothing(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	const names = 15
	ps := []*provider{n.provider("eu"), n.provider("us"), n.provider("ap")}
	// The endpoints of each cluster, one per name.
	eps := func(p *provider) []*endpoint {
		var out []*endpoint
		for i := range names {
			out = append(out, ep(fmt.Sprintf("app%d.glb.test", i), "A", p.owner, fmt.Sprintf("192.0.2.%d", i+1)))
		}
		return out
	}
	applyAtOnce(t, ps, func(p *provider) changes { return changes{Create: eps(p)} })
	lbs := n.lbs()
	for i := range names {
		name := fmt.Sprintf("app%d.glb.test", i)
		lb := lbs[name]
		if lb == nil {
			t.Errorf("%s: no load balancer", name)
			continue
		}
		got := testnode.Strings(lb["default_pools"])
		for _, p := range ps {
			if !slices.Contains(got, poolIDFor(p.owner, name, p.owner)) {
				t.Errorf("%s: %s's pool missing from %v", name, p.owner, got)
			}
		}
		if len(got) != len(ps) {
			t.Errorf("%s: default pools %v", name, got)
		}
	}
	// Now all leave at once but one, while the operator edits steering.
	stop := make(chan struct{})
	opDone := make(chan struct{})
	go func() {
		defer close(opDone)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			pol := []string{"off", "random"}[i%2]
			n.call(http.MethodPatch, "/load_balancers/"+lbIDFor(fmt.Sprintf("app%d.glb.test", i%names)), map[string]any{"steering_policy": pol}, "")
		}
	}()
	applyAtOnce(t, ps[1:], func(p *provider) changes { return changes{Delete: eps(p)} })
	close(stop)
	<-opDone
	lbs = n.lbs()
	for i := range names {
		name := fmt.Sprintf("app%d.glb.test", i)
		want := poolIDFor("eu", name, "eu")
		if got := testnode.Strings(lbs[name]["default_pools"]); !slices.Equal(got, []string{want}) || lbs[name]["fallback_pool"] != want {
			t.Errorf("%s: default pools %v fallback %v, want only eu's %s", name, got, lbs[name]["fallback_pool"], want)
		}
	}
}

// A property glb does not know, a bad weight or region, and a load-
// balanced type it cannot serve are refused by name, and the valid
// endpoints of the same plan are applied all the same.
func TestBadEndpointsAreRefusedByName(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	a := n.provider("eu")
	bad := ep("bad.glb.test", "A", "eu", "192.0.2.1")
	bad.ProviderSpecific = []property{{propWeight, "2"}, {propRegion, "MARS"}, {"webhook/glb-wieght", "1"}}
	err := a.ApplyChanges(context.Background(), &changes{Create: []*endpoint{
		bad,
		ep("v6.glb.test", "A", "eu", "2001:db8::1"),
		ep("txt.glb.test", "TXT", "eu", "hello"),
		ep("good.glb.test", "A", "eu", "192.0.2.8"),
	}})
	if err == nil {
		t.Fatal("bad endpoints accepted")
	}
	for _, want := range []string{"webhook/glb-weight \"2\"", "MARS", "webhook-glb-wieght", "not an IPv4 address", "only A and AAAA"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
	if lbs := n.lbs(); lbs["good.glb.test"] == nil || lbs["bad.glb.test"] != nil || lbs["v6.glb.test"] != nil {
		t.Errorf("load balancers made: %v", lbs)
	}
}

// The webhook speaks ExternalDNS's protocol over HTTP: negotiation with
// the domain filter and the media type, records, adjustments, changes.
func TestWebhookProtocol(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	a := n.provider("eu")
	srv := httptest.NewServer(a.webhook())
	defer srv.Close()
	get := func(path string) (int, string, string) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.Header.Set("Accept", mediaType)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), strings.TrimSpace(string(b))
	}
	post := func(path, body string) (int, string) {
		resp, err := http.Post(srv.URL+path, mediaType, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(b))
	}
	if code, ct, body := get("/"); code != 200 || ct != mediaType || body != `{"include":["glb.test"]}` {
		t.Errorf("negotiate: %d %q %s", code, ct, body)
	}
	if code, ct, body := get("/records"); code != 200 || ct != mediaType || body != "[]" {
		t.Errorf("empty records: %d %q %s", code, ct, body)
	}
	code, body := post("/adjustendpoints", `[{"dnsName":"APP.glb.test.","recordType":"A","setIdentifier":"eu","targets":["192.0.2.1"],"providerSpecific":[{"name":"webhook/glb-weight","value":"1.0"},{"name":"alias","value":"true"}]}]`)
	if code != 200 || body != `[{"dnsName":"app.glb.test","targets":["192.0.2.1"],"recordType":"A","setIdentifier":"eu"}]` {
		t.Errorf("adjust: %d %s", code, body)
	}
	if code, body := post("/records", `{"create":[{"dnsName":"app.glb.test","recordType":"A","setIdentifier":"eu","targets":["192.0.2.1"]}]}`); code != http.StatusNoContent {
		t.Errorf("apply: %d %s", code, body)
	}
	if code, _, body := get("/records"); code != 200 || body != `[{"dnsName":"app.glb.test","targets":["192.0.2.1"],"recordType":"A","setIdentifier":"eu","recordTTL":30}]` {
		t.Errorf("records: %d %s", code, body)
	}
	if code, body := post("/records", `{"create":[{"dnsName":"x.glb.test","recordType":"A","setIdentifier":"eu","targets":["nope"]}]}`); code != http.StatusInternalServerError || !strings.Contains(body, `"nope"`) {
		t.Errorf("bad apply: %d %s", code, body)
	}
	if code, body := post("/records", `{not json`); code != http.StatusBadRequest {
		t.Errorf("bad body: %d %s", code, body)
	}
	if code, _, body := get("/healthz"); code != 200 {
		t.Errorf("healthz: %d %s", code, body)
	}
	if code, _, body := get("/readyz"); code != 200 {
		t.Errorf("readyz: %d %s", code, body)
	}
	down := n.provider("eu")
	down.cl = newClient("http://127.0.0.1:1", testToken)
	rec := httptest.NewRecorder()
	down.health().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("readyz with glb unreachable: %d %s", rec.Code, rec.Body)
	}
	var eps []endpoint
	_, _, body = get("/records")
	if err := json.Unmarshal([]byte(body), &eps); err != nil || len(eps) != 1 {
		t.Errorf("records after a refused apply: %s", body)
	}
}

func TestConfig(t *testing.T) {
	t.Parallel()
	env := map[string]string{"GLB_ZONE": "z1", "GLB_EXTERNALDNS_OWNER": "eu", "GLB_API_TOKEN": "secret"}
	c, err := parseConfig(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:8888" || c.HealthListen != ":8080" || c.Server != "http://127.0.0.1:8080" || c.Token != "secret" || c.Zone != "z1" || c.Owner != "eu" {
		t.Errorf("defaults: %+v", c)
	}
	_, err = parseConfig([]string{"--server", "ftp://x", "--owner", "a/b"}, func(string) string { return "" }, io.Discard)
	for _, want := range []string{"--server", "--zone", "--owner"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %s", err, want)
		}
	}
}

// webhook/glb-monitor gives the cluster's pool its monitor; a monitor glb
// does not have, from the annotation or from --monitor, is refused by
// name, and so is the annotation on a pool an operator made, whose
// monitors are the operator's.
func TestMonitorAnnotation(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	n.must(http.MethodPost, "/monitors", map[string]any{"id": "http", "type": "http"}, "")
	n.must(http.MethodPost, "/monitors", map[string]any{"id": "tcp", "type": "tcp", "port": 443}, "")
	n.must(http.MethodPost, "/pools", map[string]any{"id": "edge", "name": "edge", "monitor": "http",
		"origins": []any{map[string]any{"name": "dc1", "address": "203.0.113.1"}}}, "")
	a := n.provider("eu")
	a.monitor = "http"
	good := ep("good.glb.test", "A", "eu", "192.0.2.1")
	good.ProviderSpecific = []property{{propMonitor, "tcp"}}
	typo := ep("typo.glb.test", "A", "eu", "192.0.2.2")
	typo.ProviderSpecific = []property{{propMonitor, "tpc"}}
	theirs := ep("theirs.glb.test", "A", "eu", "192.0.2.3")
	theirs.ProviderSpecific = []property{{propPool, "edge"}, {propMonitor, "tcp"}}
	err := a.ApplyChanges(context.Background(), &changes{Create: []*endpoint{good, typo, theirs}})
	if err == nil {
		t.Fatal("an unknown monitor and a monitor for an operator's pool were accepted")
	}
	for _, want := range []string{`webhook/glb-monitor (annotation external-dns.alpha.kubernetes.io/webhook-glb-monitor) "tpc": no such monitor (glb has http, tcp)`,
		`"tcp": pool edge was made by someone else`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
	if pool := n.must(http.MethodGet, "/pools/"+poolIDFor("eu", "good.glb.test", "eu"), nil, ""); pool["monitor"] != "tcp" {
		t.Errorf("good's pool monitor %v, want tcp", pool["monitor"])
	}
	if lbs := n.lbs(); lbs["typo.glb.test"] != nil || lbs["theirs.glb.test"] != nil {
		t.Errorf("load balancers made for refused endpoints: %v", lbs)
	}
	if pool := n.must(http.MethodGet, "/pools/edge", nil, ""); pool["monitor"] != "http" || len(pool["origins"].([]any)) != 1 {
		t.Errorf("operator's pool changed: monitor %v origins %v", pool["monitor"], pool["origins"])
	}

	// The provider's default, when glb lacks it, is refused naming the flag.
	b := n.provider("us")
	b.monitor = "gone"
	err = b.ApplyChanges(context.Background(), &changes{Create: []*endpoint{ep("b.glb.test", "A", "us", "192.0.2.9")}})
	if err == nil || !strings.Contains(err.Error(), `--monitor "gone": no such monitor`) {
		t.Errorf("an unknown --monitor: %v", err)
	}

	// Removing the AAAA half of an endpoint keeps the monitor the A half
	// named.
	dual := ep("dual.glb.test", "A", "eu", "192.0.2.4")
	dual.ProviderSpecific = []property{{propMonitor, "tcp"}}
	dual6 := ep("dual.glb.test", "AAAA", "eu", "2001:db8::4")
	dual6.ProviderSpecific = dual.ProviderSpecific
	apply(t, a, changes{Create: []*endpoint{dual, dual6}})
	apply(t, a, changes{Delete: []*endpoint{dual6}})
	if pool := n.must(http.MethodGet, "/pools/"+poolIDFor("eu", "dual.glb.test", "eu"), nil, ""); pool["monitor"] != "tcp" || len(pool["origins"].([]any)) != 1 {
		t.Errorf("after the AAAA left: monitor %v origins %v", pool["monitor"], pool["origins"])
	}
}

// The TTL of a load balancer the provider made follows the endpoints';
// an operator's load balancer keeps the operator's, and endpoints asking
// for another plan no update there (AdjustEndpoints drops their TTL).
func TestTTLOwnership(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	a := n.provider("eu")
	withTTL := func(e *endpoint, ttl int64) *endpoint { e.RecordTTL = ttl; return e }

	// Made by the provider: the endpoint's TTL, and its changes.
	apply(t, a, changes{Create: []*endpoint{withTTL(ep("made.glb.test", "A", "eu", "192.0.2.1"), 30)}})
	if lb := n.lbs()["made.glb.test"]; lb["ttl"] != float64(30) {
		t.Fatalf("made load balancer's ttl %v, want the endpoint's 30", lb["ttl"])
	}
	cur := records(t, a)
	adjusted := a.AdjustEndpoints([]*endpoint{withTTL(ep("made.glb.test", "A", "eu", "192.0.2.1"), 60)})
	if adjusted[0].RecordTTL != 60 {
		t.Fatalf("AdjustEndpoints changed the TTL of the provider's load balancer: %d", adjusted[0].RecordTTL)
	}
	apply(t, a, changes{UpdateOld: cur, UpdateNew: adjusted})
	if lb := n.lbs()["made.glb.test"]; lb["ttl"] != float64(60) {
		t.Errorf("made load balancer's ttl %v after the endpoint asked 60", lb["ttl"])
	}

	// The operator's: its TTL stays, and the desired TTL is dropped so
	// that the plan has nothing to update.
	n.must(http.MethodPost, "/pools", map[string]any{"id": "onprem", "name": "onprem",
		"origins": []any{map[string]any{"name": "dc1", "address": "203.0.113.1"}}}, "")
	n.must(http.MethodPost, "/load_balancers", map[string]any{"id": "ops", "zone": n.zone, "name": "ops.glb.test",
		"default_pools": []string{"onprem"}, "fallback_pool": "onprem", "ttl": 5}, "")
	records(t, a)
	desired := a.AdjustEndpoints([]*endpoint{withTTL(ep("ops.glb.test", "A", "eu", "192.0.2.2"), 60)})
	if desired[0].RecordTTL != 0 {
		t.Errorf("AdjustEndpoints kept TTL %d for an operator's load balancer", desired[0].RecordTTL)
	}
	apply(t, a, changes{Create: []*endpoint{withTTL(ep("ops.glb.test", "A", "eu", "192.0.2.2"), 60)}})
	if lb := n.lbs()["ops.glb.test"]; lb["ttl"] != float64(5) || !slices.Contains(testnode.Strings(lb["default_pools"]), poolIDFor("eu", "ops.glb.test", "eu")) {
		t.Errorf("operator's load balancer: ttl %v (want 5), default pools %v", lb["ttl"], lb["default_pools"])
	}
}
