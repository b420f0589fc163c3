package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/internal/testnode"
)

// feedSite is what the feed tests share: a zone, a feed monitor of ttl
// seconds (0: the default) that decides the health of pool "web" (origins
// a 192.0.2.1 and b 192.0.2.2) alone, must_be_healthy, and
// www.glb.example.com answering every eligible origin of web.
type feedSite struct {
	monitor, pool, lb string
}

func newFeedSite(t *testing.T, g *glbd, ttl int, shedding map[string]any) feedSite {
	t.Helper()
	var s feedSite
	zone := zoneFor(t, g)
	s.monitor = g.must("POST", "/api/v1/monitors", map[string]any{"type": "feed", "ttl": ttl, "description": "fed in"})["id"].(string)
	pool := map[string]any{"name": "web", "monitors": []map[string]any{{"monitor": s.monitor, "must_be_healthy": true}},
		"origins": []map[string]any{{"name": "a", "address": "192.0.2.1"}, {"name": "b", "address": "192.0.2.2"}}}
	if shedding != nil {
		pool["load_shedding"] = shedding
	}
	s.pool = g.must("POST", "/api/v1/pools", pool)["id"].(string)
	s.lb = g.must("POST", "/api/v1/load_balancers", map[string]any{
		"zone": zone, "name": "www.glb.example.com", "default_pools": []any{s.pool}, "fallback_pool": s.pool, "answers": 0,
	})["id"].(string)
	answerWithin(t, g, 10*time.Second, "both origins answered", "192.0.2.1", "192.0.2.2")
	return s
}

// feed PUTs a word for origin of the site's pool with g's token.
func (s feedSite) feed(t *testing.T, g *glbd, origin string, word map[string]any) api.FeedView {
	t.Helper()
	var out struct{ Result api.FeedView }
	if status := g.call("PUT", "/api/v1/pools/"+s.pool+"/origins/"+origin+"/feed", word, &out); status != http.StatusOK {
		t.Fatalf("feed %s %v: status %d", origin, word, status)
	}
	return out.Result
}

// needAlertmanager is Debian's prometheus-alertmanager, or a skip.
func needAlertmanager(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"prometheus-alertmanager", "alertmanager"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Skip("prometheus-alertmanager not installed (Debian: prometheus-alertmanager; scripts/install-deps.sh installs it)")
	return ""
}

// deliveries is a transparent proxy between Alertmanager and glbd that
// notes when each webhook reaches glbd: the clock the acceptance's 2 s
// run from. It forwards the request as received (method, headers, body)
// and answers with glbd's answer.
type deliveries struct {
	srv *httptest.Server
	at  chan delivery
}

type delivery struct {
	at     time.Time
	body   []byte
	status int
}

func newDeliveries(t *testing.T, target string) *deliveries {
	t.Helper()
	d := &deliveries{at: make(chan delivery, 64)}
	d.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, _ := http.NewRequest(r.Method, target+r.URL.RequestURI(), bytes.NewReader(body))
		req.Header = r.Header.Clone()
		at := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		answer, _ := io.ReadAll(resp.Body)
		d.at <- delivery{at: at, body: body, status: resp.StatusCode}
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(answer)
	}))
	t.Cleanup(d.srv.Close)
	return d
}

// next waits for the next webhook whose body contains want.
func (d *deliveries) next(t *testing.T, within time.Duration, want string) delivery {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case dl := <-d.at:
			if dl.status != http.StatusOK {
				t.Fatalf("glbd answered the webhook %d: %s", dl.status, dl.body)
			}
			if bytes.Contains(dl.body, []byte(want)) {
				return dl
			}
		case <-deadline:
			t.Fatalf("no webhook with %s within %v", want, within)
		}
	}
}

// alertmanager is a real Alertmanager on loopback whose one receiver is a
// webhook to url with a bearer token.
type alertmanager struct {
	api string // http://host:port
}

func startAlertmanager(t *testing.T, bin, url, token string) *alertmanager {
	t.Helper()
	dir := t.TempDir()
	// group_wait 0s: a new alert goes out at once; group_interval 1s: a
	// change to the group (a resolution) within a second.
	conf := fmt.Sprintf(`global:
  resolve_timeout: 1m
route:
  receiver: glb
  group_by: [alertname]
  group_wait: 0s
  group_interval: 1s
  repeat_interval: 1m
receivers:
  - name: glb
    webhook_configs:
      - url: %s
        send_resolved: true
        http_config:
          authorization:
            credentials: %s
`, url, token)
	if err := os.WriteFile(filepath.Join(dir, "alertmanager.yml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	// --cluster.listen-address= turns gossip off: no port of its own.
	_, m := testnode.Start(t, "alertmanager", []string{bin, "--config.file=" + filepath.Join(dir, "alertmanager.yml"),
		"--storage.path=" + filepath.Join(dir, "data"), "--web.listen-address=127.0.0.1:0", "--cluster.listen-address=",
		"--log.level=debug"}, nil, regexp.MustCompile(`msg="Listening on" address=(\S+)`))
	am := &alertmanager{api: "http://" + m[1]}
	eventually(t, 30*time.Second, "alertmanager ready", func() (bool, string) {
		resp, err := http.Get(am.api + "/-/ready")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	return am
}

// post sends one alert through Alertmanager's API, as Prometheus would;
// endsAt in the past resolves it.
func (am *alertmanager) post(t *testing.T, labels map[string]string, summary string, endsAt time.Time) {
	t.Helper()
	a := map[string]any{"labels": labels, "annotations": map[string]string{"summary": summary},
		"startsAt": time.Now().Add(-time.Minute).UTC().Format(time.RFC3339Nano), "generatorURL": "http://prometheus.test/graph"}
	if !endsAt.IsZero() {
		a["endsAt"] = endsAt.UTC().Format(time.RFC3339Nano)
	}
	status, _, body := testnode.API{Base: am.api}.Do(t, "POST", "/api/v2/alerts", []any{a})
	if status != http.StatusOK {
		t.Fatalf("POST /api/v2/alerts: %d %s", status, body)
	}
}

// TestAlertmanagerTakesOriginOut: a real Alertmanager, fed a firing alert
// through its API, sends its webhook to glbd with a feed-scoped token;
// the origin named by the alert's labels leaves the answers within 2 s
// of the webhook reaching glbd, with the alert's summary as its reason,
// and comes back within 2 s of the resolution's webhook.
func TestAlertmanagerTakesOriginOut(t *testing.T) {
	t.Parallel()
	bin := needAlertmanager(t)
	g := startGlbd(t, "", "--api-token", "bootstrap-secret")
	g.token = "bootstrap-secret"
	s := newFeedSite(t, g, 0, nil)
	token := g.must("POST", "/api/v1/tokens", map[string]any{"name": "alertmanager", "scopes": []string{"feed"}})["secret"].(string)
	d := newDeliveries(t, g.api)
	am := startAlertmanager(t, bin, d.srv.URL+"/api/v1/feeds/alertmanager", token)

	labels := map[string]string{"alertname": "OriginErrors", "glb_pool": "web", "glb_origin": "a", "severity": "page"}
	am.post(t, labels, "a answers 5xx to 12 % of requests", time.Time{})
	fired := d.next(t, 30*time.Second, `"status":"firing"`)
	withinOfDelivery(t, g, fired, "origin a out of the answers after the firing webhook", "192.0.2.2")
	ph := poolHealth(t, g, s.pool)
	a := originOf(ph, "a")
	if a.Healthy == nil || *a.Healthy || !strings.Contains(a.Reason, "a answers 5xx to 12 % of requests") {
		t.Errorf("origin a: %s; want down with the alert's summary", describeHealth(ph))
	}
	if len(a.Feeds) != 1 || a.Feeds[0].Source != "alertmanager" || a.Feeds[0].Up || len(a.Feeds[0].Alerts) != 1 {
		t.Errorf("a's words %+v", a.Feeds)
	}
	var audit struct{ Result []map[string]any }
	g.call("GET", "/api/v1/audit?kind=feeds", nil, &audit)
	if len(audit.Result) == 0 || audit.Result[0]["actor"] != "alertmanager" {
		t.Errorf("audit of the webhook: %v", audit.Result)
	}

	am.post(t, labels, "a answers 5xx to 12 % of requests", time.Now().Add(-time.Second))
	resolved := d.next(t, 30*time.Second, `"status":"resolved"`)
	withinOfDelivery(t, g, resolved, "origin a back after the resolution", "192.0.2.1", "192.0.2.2")
}

// withinOfDelivery asserts that the answer becomes want within 2 s of the
// webhook dl reaching glbd (the acceptance's bound), and logs how long it
// took: from the delivery to the first dig that saw it.
func withinOfDelivery(t *testing.T, g *glbd, dl delivery, what string, want ...string) {
	t.Helper()
	answerWithin(t, g, 10*time.Second, what, want...)
	took := time.Since(dl.at)
	t.Logf("%s: %v after the webhook reached glbd", what, took.Round(time.Millisecond))
	if took > 2*time.Second {
		t.Errorf("%s took %v from the webhook's delivery, more than 2 s", what, took)
	}
}

// TestFeedSilentExpires: a generic feed's down word lasts its ttl: the
// origin is out of the answers until then, and back on its own once the
// word expires, nobody writing anything.
func TestFeedSilentExpires(t *testing.T) {
	t.Parallel()
	g := startGlbd(t, "")
	s := newFeedSite(t, g, 0, nil)
	w := s.feed(t, g, "a", map[string]any{"up": false, "reason": "draining for a deploy", "ttl": 4})
	answerWithin(t, g, 2*time.Second, "origin a out while its word lasts", "192.0.2.2")
	if d := w.Expires.Sub(w.At); d != 4*time.Second {
		t.Fatalf("the word lasts %v, want its ttl", d)
	}
	// Still out a moment before the expiry: the word, not some timeout,
	// holds it.
	if wait := time.Until(w.Expires.Add(-time.Second)); wait > 0 {
		time.Sleep(wait)
	}
	if got, _ := dig(t, g.dns, "www.glb.example.com", "A"); slices.Contains(got, "192.0.2.1") {
		t.Fatalf("origin a back before its word expired: %v", got)
	}
	eventually(t, time.Until(w.Expires.Add(2*time.Second)), "origin a back once its word expired", func() (bool, string) {
		got, _ := dig(t, g.dns, "www.glb.example.com", "A")
		return slices.Equal(got, []string{"192.0.2.1", "192.0.2.2"}), strings.Join(got, ",")
	})
	t.Logf("word expired → a back in DNS %v after its expiry", time.Since(w.Expires).Round(time.Millisecond))
	a := originOf(poolHealth(t, g, s.pool), "a")
	if len(a.Feeds) != 1 || a.Feeds[0].Live || !strings.Contains(a.Note, "expired") {
		t.Errorf("a after the expiry: note %q, words %+v", a.Note, a.Feeds)
	}
}

// TestFeedLoadSheds: an origin whose feed reports 0.95 (by_load 0.7–0.9)
// takes no answer; at 0.8 it is answered again with half its share, as
// explain shows.
func TestFeedLoadSheds(t *testing.T) {
	t.Parallel()
	g := startGlbd(t, "")
	s := newFeedSite(t, g, 0, map[string]any{"by_load": map[string]any{"low": 0.7, "high": 0.9}})
	s.feed(t, g, "a", map[string]any{"up": true, "load": 0.95, "ttl": 300})
	answerWithin(t, g, 2*time.Second, "origin a at 0.95 takes no answer", "192.0.2.2")
	ex := explain(t, g, s.lb, "192.0.2.99")
	if o := ex.Decision.Origins.Overloaded; len(o) != 1 || o[0].Name != "a" || o[0].Load != 0.95 {
		t.Errorf("explain: overloaded %+v", o)
	}
	if l := originOf(poolHealth(t, g, s.pool), "a").Load; l == nil || *l != 0.95 {
		t.Errorf("pool health: a's load %v", l)
	}

	s.feed(t, g, "a", map[string]any{"up": true, "load": 0.8, "ttl": 300})
	answerWithin(t, g, 2*time.Second, "origin a at 0.8 answered again", "192.0.2.1", "192.0.2.2")
	ex = explain(t, g, s.lb, "192.0.2.99")
	for _, o := range ex.Decision.Origins.Eligible {
		want := map[string]float64{"a": 0.25, "b": 0.75}[o.Name]
		if d := o.Share - want; d > 1e-9 || d < -1e-9 {
			t.Errorf("explain: %s's share %v, want %v (%+v)", o.Name, o.Share, want, o)
		}
	}

	// A load lasts its word: once it expires, a takes its whole share.
	w := s.feed(t, g, "a", map[string]any{"up": true, "load": 0.95, "ttl": 3})
	answerWithin(t, g, 2*time.Second, "origin a at 0.95 again", "192.0.2.2")
	eventually(t, time.Until(w.Expires.Add(3*time.Second)), "origin a back once its load expired", func() (bool, string) {
		got, _ := dig(t, g.dns, "www.glb.example.com", "A")
		return slices.Equal(got, []string{"192.0.2.1", "192.0.2.2"}), strings.Join(got, ",")
	})
	if time.Now().Before(w.Expires) {
		t.Errorf("the load stopped counting before its word expired")
	}
}

// TestFeedReachesEveryNode: a word fed through one node of a fleet
// sharing PostgreSQL takes the origin out of the other node's answers too.
func TestFeedReachesEveryNode(t *testing.T) {
	t.Parallel()
	a, b := startTwoNodes(t)
	s := newFeedSite(t, a, 0, nil)
	answerWithin(t, b, 10*time.Second, "node b answers both origins", "192.0.2.1", "192.0.2.2")
	s.feed(t, a, "b", map[string]any{"up": false, "reason": "fed through node a", "ttl": 300})
	for _, g := range []*glbd{a, b} {
		answerWithin(t, g, 5*time.Second, "origin b out of the answers on every node", "192.0.2.1")
	}
	if r := originOf(poolHealth(t, b, s.pool), "b").Reason; !strings.Contains(r, "fed through node a") {
		t.Errorf("node b's reason for b: %q", r)
	}
}
