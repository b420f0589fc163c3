package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/pools"
)

// feedSite is a pool "web" whose group has an http monitor and a feed
// monitor (ttl 120 s), both must_be_healthy, origins a and b, and a pool
// "plain" checked by the http monitor alone.
type feedSite struct {
	feed, http, web, plain string
}

func (e *env) feedSite() feedSite {
	e.t.Helper()
	var s feedSite
	s.http = e.create(pools.KindMonitor, monitorBody())["id"].(string)
	s.feed = e.create(pools.KindMonitor, map[string]any{"type": "feed", "ttl": 120, "description": "prometheus"})["id"].(string)
	web := poolBody("")
	web["name"] = "web"
	web["monitors"] = []map[string]any{{"monitor": s.http, "must_be_healthy": true}, {"monitor": s.feed, "must_be_healthy": true}}
	s.web = e.create(pools.KindPool, web)["id"].(string)
	plain := poolBody(s.http)
	plain["name"] = "plain"
	s.plain = e.create(pools.KindPool, plain)["id"].(string)
	return s
}

func feedPath(pool, origin string) string {
	return "/api/v1/pools/" + pool + "/origins/" + origin + "/feed"
}

// feedAudit is the audit log of words fed in, newest first.
func feedAudit(t *testing.T, e *env) []pools.AuditEntry {
	t.Helper()
	res, err := e.store.Audit(context.Background(), pools.AuditFilter{Kind: pools.KindFeed}, pools.Page{PerPage: 100})
	if err != nil {
		t.Fatal(err)
	}
	return res.Items
}

func TestFeedPut(t *testing.T) {
	e := parallelEnv(t, func(o *api.Options) { o.Token = "bootstrap-secret" })
	s := e.feedSite()
	feeder := e.newToken("prometheus", "feed")
	reader := e.newToken("dashboard", "read")
	writer := e.newToken("ci", "write")

	before := time.Now().Add(-time.Second)
	r := e.do("PUT", feedPath(s.web, "a"), map[string]any{"up": false, "reason": "maintenance", "ttl": 60, "load": 0.8}, bearer(feeder)...)
	if r.status != http.StatusOK {
		t.Fatalf("PUT feed: %d %s", r.status, r.body)
	}
	var out struct{ Result api.FeedView }
	r.json(t, &out)
	w := out.Result
	if w.Pool != s.web || w.Origin != "a" || w.Monitor != s.feed || w.Up || w.Reason != "maintenance" || w.Load == nil || *w.Load != 0.8 ||
		w.Source != pools.FeedSourceAPI || !w.Live || w.Expires.Sub(w.At) != time.Minute || w.At.Before(before) {
		t.Errorf("word stored %+v", w)
	}
	var list struct{ Result []api.FeedView }
	e.do("GET", feedPath(s.web, "a"), nil, bearer(reader)...).json(t, &list)
	if len(list.Result) != 1 || list.Result[0].Reason != "maintenance" {
		t.Errorf("GET feed: %+v", list.Result)
	}
	var health struct{ Result api.PoolHealth }
	e.do("GET", "/api/v1/pools/"+s.web+"/health", nil, bearer(reader)...).json(t, &health)
	if fs := health.Result.Origins[0].Feeds; len(fs) != 1 || fs[0].Up || !fs[0].Live {
		t.Errorf("pool health of a shows the words %+v", fs)
	}

	// Audited by the feeding token, once per word that says something new.
	if es := feedAudit(t, e); len(es) != 1 || es[0].Actor != "prometheus" || es[0].Method != "PUT" || es[0].Action != pools.ActionCreate ||
		es[0].ObjectID != s.web+"/a/"+s.feed || es[0].Revision != 0 {
		t.Errorf("audit %+v", es)
	}
	e.do("PUT", feedPath(s.web, "a"), map[string]any{"up": false, "reason": "maintenance", "ttl": 60, "load": 0.8}, bearer(feeder)...)
	if es := feedAudit(t, e); len(es) != 1 {
		t.Errorf("a renewal audited: %d entries", len(es))
	}
	// Without a ttl, the monitor's; write includes feed.
	r = e.do("PUT", feedPath(s.web, "a"), map[string]any{"up": true}, bearer(writer)...)
	out.Result = api.FeedView{}
	r.json(t, &out)
	if r.status != http.StatusOK || out.Result.Expires.Sub(out.Result.At) != 120*time.Second || out.Result.Load != nil {
		t.Errorf("up without ttl: %d %+v", r.status, out.Result)
	}
	if es := feedAudit(t, e); len(es) != 2 || es[0].Actor != "ci" || es[0].Action != pools.ActionUpdate {
		t.Errorf("audit after the up word %+v", es)
	}

	// Bad bodies name their fields; nothing is stored.
	for _, c := range []struct {
		body   any
		fields []string
	}{
		{map[string]any{}, []string{"up"}},
		{map[string]any{"up": "no"}, []string{"up"}},
		{map[string]any{"up": true, "load": 2, "ttl": 0, "reason": "a\nb"}, []string{"load", "ttl", "reason"}},
		{map[string]any{"up": true, "ttl": 604801}, []string{"ttl"}},
		{map[string]any{"up": true, "colour": "red"}, []string{"colour"}},
		{map[string]any{"up": true, "monitor": s.http}, []string{"monitor"}},
	} {
		p := e.do("PUT", feedPath(s.web, "b"), c.body, bearer(feeder)...).problem(t, http.StatusBadRequest)
		got := fieldPaths(p)
		for _, f := range c.fields {
			if !got[f] {
				t.Errorf("body %v: errors %+v do not name %s", c.body, p.Errors, f)
			}
		}
	}
	if es := feedAudit(t, e); len(es) != 2 {
		t.Errorf("refused words audited: %d entries", len(es))
	}
	e.do("PUT", "/api/v1/pools/nope/origins/a/feed", map[string]any{"up": true}, bearer(feeder)...).problem(t, http.StatusNotFound)
	p := e.do("PUT", feedPath(s.web, "zz"), map[string]any{"up": true}, bearer(feeder)...).problem(t, http.StatusNotFound)
	if !strings.Contains(p.Detail, `"zz"`) {
		t.Errorf("unknown origin: %q", p.Detail)
	}
	e.do("GET", feedPath(s.web, "zz"), nil, bearer(reader)...).problem(t, http.StatusNotFound)
	p = e.do("PUT", feedPath(s.plain, "a"), map[string]any{"up": false}, bearer(feeder)...).problem(t, http.StatusConflict)
	if !strings.Contains(p.Detail, "add a monitor of type feed") {
		t.Errorf("pool without a feed monitor: %q", p.Detail)
	}

	// The feed scope feeds and does nothing else; read does not feed.
	forbidden := func(secret, method, path string, body any, scope string) {
		t.Helper()
		if p := e.do(method, path, body, bearer(secret)...).problem(t, http.StatusForbidden); p.MissingScope != scope {
			t.Errorf("%s %s: missing scope %q, want %q", method, path, p.MissingScope, scope)
		}
	}
	forbidden(feeder, "GET", "/api/v1/pools", nil, "read")
	forbidden(feeder, "GET", feedPath(s.web, "a"), nil, "read")
	forbidden(feeder, "PATCH", "/api/v1/pools/"+s.web, map[string]any{"minimum_origins": 2}, "write")
	forbidden(reader, "PUT", feedPath(s.web, "a"), map[string]any{"up": true}, "feed")
	forbidden(reader, "POST", "/api/v1/feeds/alertmanager", map[string]any{"version": "4", "alerts": []any{}}, "feed")
}

// alertmanagerBody is a webhook as Alertmanager 0.25 sends it (every
// field of notify/webhook.Message and template.Data), with alerts.
func alertmanagerBody(status string, alerts ...map[string]any) map[string]any {
	return map[string]any{
		"receiver": "glb", "status": status, "alerts": alerts,
		"groupLabels": map[string]any{"alertname": "OriginDown"}, "commonLabels": map[string]any{"alertname": "OriginDown"},
		"commonAnnotations": map[string]any{}, "externalURL": "http://alertmanager:9093",
		"version": "4", "groupKey": `{}:{alertname="OriginDown"}`, "truncatedAlerts": 0,
	}
}

func alert(status, fingerprint string, labels map[string]string, summary string) map[string]any {
	a := map[string]any{
		"status": status, "labels": labels, "annotations": map[string]any{"summary": summary},
		"startsAt": "2026-01-01T12:00:00.000Z", "endsAt": "0001-01-01T00:00:00Z",
		"generatorURL": "http://prometheus:9090/graph?g0.expr=up+%3D%3D+0", "fingerprint": fingerprint,
	}
	if status == "resolved" {
		a["endsAt"] = "2026-01-01T12:05:00.000Z"
	}
	return a
}

func TestAlertmanagerWebhook(t *testing.T) {
	e := parallelEnv(t, func(o *api.Options) { o.Token = "bootstrap-secret" })
	s := e.feedSite()
	// A second feed monitor reads other labels, in a pool of its own.
	custom := e.create(pools.KindMonitor, map[string]any{"type": "feed", "pool_label": "service", "origin_label": "instance"})["id"].(string)
	svc := poolBody(custom)
	svc["name"] = "svc"
	svcID := e.create(pools.KindPool, svc)["id"].(string)
	feeder := e.newToken("alertmanager", "feed")

	post := func(body map[string]any) api.AlertmanagerResult {
		t.Helper()
		r := e.do("POST", "/api/v1/feeds/alertmanager", body, bearer(feeder)...)
		if r.status != http.StatusOK {
			t.Fatalf("webhook: %d %s", r.status, r.body)
		}
		var out struct{ Result api.AlertmanagerResult }
		r.json(t, &out)
		return out.Result
	}
	res := post(alertmanagerBody("firing",
		alert("firing", "f1", map[string]string{"alertname": "OriginDown", "glb_pool": "web", "glb_origin": "a"}, "a answers 5xx"),
		alert("firing", "f2", map[string]string{"alertname": "OriginDown", "glb_pool": "nope", "glb_origin": "a"}, "x"),
		alert("firing", "f3", map[string]string{"alertname": "Other"}, "y"),
		alert("firing", "f4", map[string]string{"alertname": "OriginDown", "glb_pool": s.plain, "glb_origin": "a"}, "z"),
		alert("firing", "f5", map[string]string{"alertname": "Latency", "service": svcID, "instance": "b"}, "b is slow"),
	))
	if len(res.Words) != 2 {
		t.Fatalf("words %+v", res.Words)
	}
	for _, w := range res.Words {
		switch w.Pool {
		case s.web:
			if w.Origin != "a" || w.Up || w.Reason != "a answers 5xx" || w.Monitor != s.feed || w.Source != pools.FeedSourceAlertmanager ||
				w.Expires.Sub(w.At) != 120*time.Second || len(w.Alerts) != 1 || w.Alerts[0].Fingerprint != "f1" {
				t.Errorf("word of web/a %+v", w)
			}
		case svcID:
			if w.Origin != "b" || w.Up || w.Monitor != custom || w.Expires.Sub(w.At) != time.Duration(pools.DefaultFeedTTL)*time.Second {
				t.Errorf("word of svc/b (custom labels) %+v", w)
			}
		default:
			t.Errorf("a word of pool %s", w.Pool)
		}
	}
	reasons := map[string]string{}
	for _, ig := range res.Ignored {
		reasons[ig.Fingerprint] = ig.Reason
	}
	for fp, want := range map[string]string{"f2": `no pool has the id or name "nope"`, "f3": "its labels name no pool and origin",
		"f4": "has no feed monitor"} {
		if !strings.Contains(reasons[fp], want) {
			t.Errorf("alert %s ignored because %q, want %q", fp, reasons[fp], want)
		}
	}
	if len(res.Ignored) != 3 {
		t.Errorf("ignored %+v", res.Ignored)
	}

	// A second alert on a, notified apart, then the first resolves: a
	// stays down until the second does too.
	res = post(alertmanagerBody("firing", alert("firing", "g1", map[string]string{"alertname": "Errors", "glb_pool": s.web, "glb_origin": "a"}, "errors")))
	if w := res.Words[0]; w.Up || len(w.Alerts) != 2 {
		t.Errorf("second alert: %+v", w)
	}
	res = post(alertmanagerBody("resolved", alert("resolved", "f1", map[string]string{"alertname": "OriginDown", "glb_pool": "web", "glb_origin": "a"}, "a answers 5xx")))
	if w := res.Words[0]; w.Up || w.Reason != "errors" {
		t.Errorf("first resolved, second firing: %+v", w)
	}
	res = post(alertmanagerBody("resolved", alert("resolved", "g1", map[string]string{"alertname": "Errors", "glb_pool": s.web, "glb_origin": "a"}, "errors")))
	if w := res.Words[0]; !w.Up || w.Reason != "resolved: errors" || w.Alerts != nil {
		t.Errorf("both resolved: %+v", w)
	}
	if es := feedAudit(t, e); len(es) != 5 || es[0].Actor != "alertmanager" || es[0].Method != "POST" {
		t.Errorf("audit: %d entries, newest %+v", len(es), es[0])
	}

	// What is not Alertmanager's webhook is refused, naming the field.
	for _, c := range []struct {
		body  any
		field string
	}{
		{map[string]any{"version": "3", "alerts": []any{}}, "version"},
		{map[string]any{"version": "4", "alerts": "x"}, "alerts"},
		{alertmanagerBody("firing", map[string]any{"status": "pending", "labels": map[string]string{}}), "alerts[0].status"},
	} {
		p := e.do("POST", "/api/v1/feeds/alertmanager", c.body, bearer(feeder)...).problem(t, http.StatusBadRequest)
		if !fieldPaths(p)[c.field] {
			t.Errorf("body %v: errors %+v do not name %s", c.body, p.Errors, c.field)
		}
	}
}
