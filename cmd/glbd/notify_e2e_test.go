package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/internal/webhooktest"
	"github.com/glb-dns/glb/pools"
)

// hookReceiver is a real webhook endpoint (webhooktest.Receiver): it
// checks every request's Standard Webhooks signature with its own code
// and the secret the API showed at creation, answers with the status the
// test sets, and keeps what arrived and when.
type hookReceiver struct{ *webhooktest.Receiver }

type hook struct {
	path   string
	at     time.Time
	status int // what the receiver answered
	event  pools.Event
	bad    string // why the signature did not check out
}

func newHookReceiver(t *testing.T) *hookReceiver {
	return &hookReceiver{webhooktest.NewReceiver(t)}
}

// hooks are the requests sent to path, each with its event decoded.
func (r *hookReceiver) hooks(path string) []hook {
	var out []hook
	for _, q := range r.Requests(path) {
		h := hook{path: q.Path, at: q.At, status: q.Status, bad: q.Bad}
		if err := json.Unmarshal(q.Body, &h.event); err != nil {
			h.bad += " body: " + err.Error()
		}
		out = append(out, h)
	}
	return out
}

// subscribe creates a standard subscription to path and gives its
// secret, shown once, to the receiver.
func (r *hookReceiver) subscribe(t *testing.T, g *glbd, path string, events ...string) string {
	t.Helper()
	res := g.must("POST", "/api/v1/notifications", map[string]any{"name": strings.Trim(path, "/"), "url": r.URL + path, "events": events})
	secret, _ := res["secret"].(string)
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("no secret in %v", res)
	}
	r.SetSecret(path, secret)
	return res["id"].(string)
}

// delivered lists, per event id in order of first arrival, the 2xx
// deliveries of path.
func delivered(hs []hook) []hook {
	var out []hook
	seen := map[string]bool{}
	for _, h := range hs {
		if h.status/100 == 2 && !seen[h.event.ID] {
			seen[h.event.ID] = true
			out = append(out, h)
		}
	}
	return out
}

func describeHooks(hs []hook) string {
	var b strings.Builder
	for _, h := range hs {
		fmt.Fprintf(&b, "\n  %s %d %s %s old=%s new=%s %s", h.at.Format("15:04:05.000"), h.status, h.event.Type, h.event.ID, h.event.Data.Old, h.event.Data.New, h.bad)
	}
	return b.String()
}

// TestNotifyFailoverTwoNodes is the acceptance of notifications: two
// nodes on PostgreSQL, a receiver checking every signature. An origin
// stops and its pool fails over: exactly one origin-down, one pool-down
// and one failover event reach the receiver (not one per node), each
// within 2 s of the DNS answer changing; the origin comes back: the
// matching up events. Then the receiver fails for a while and the node
// delivering is killed mid-retry: the other node delivers every event of
// that time afterwards, in order, none missing.
func TestNotifyFailoverTwoNodes(t *testing.T) {
	t.Parallel()
	origins := startOrigins(t, "127.0.4.1", "127.0.4.2")
	a, b := origins[0], origins[1]
	rcv := newHookReceiver(t)
	url := freshDatabase(t)
	// Retries every 200 ms to 1 s instead of 5 s to 10 min, so that the
	// receiver's outage fits a test (the flags are there for it).
	// The receiver is on loopback, which only --outbound-allow opens.
	flags := []string{"--database-url", url, "--notify-poll", "200ms", "--notify-retry-base", "200ms",
		"--notify-retry-max", "1s", "--notify-lease", "11s", "--outbound-allow", "127.0.0.1"}
	n1 := startGlbd(t, "", append(flags, "--node", "n1")...)
	n2 := startGlbd(t, "", append(flags, "--node", "n2", "--migrate=false")...)
	nodes := []*glbd{n1, n2}

	zone := zoneFor(t, n1)
	mon := fastMonitor(t, n1, a.port())
	primary := n1.must("POST", "/api/v1/pools", map[string]any{"name": "primary", "monitor": mon,
		"origins": []map[string]any{{"name": "a", "address": a.ip()}}})["id"].(string)
	backup := n1.must("POST", "/api/v1/pools", map[string]any{"name": "backup", "monitor": mon,
		"origins": []map[string]any{{"name": "b", "address": b.ip()}}})["id"].(string)
	lb := n1.must("POST", "/api/v1/load_balancers", map[string]any{
		"zone": zone, "name": "www.glb.example.com", "default_pools": []any{primary, backup}, "fallback_pool": backup,
	})["id"].(string)
	health := "/health"
	rcv.subscribe(t, n1, health, "origin_health", "pool_health", "failover")
	for _, g := range nodes {
		answerWithin(t, g, 10*time.Second, "the primary answers", a.ip())
	}
	// Both nodes have checked both origins healthy: what follows is the
	// transition, not the first view.
	eventually(t, 10*time.Second, "both nodes checked both origins", func() (bool, string) {
		for _, p := range []string{primary, backup} {
			ph := poolHealth(t, n1, p)
			for _, o := range ph.Origins {
				if len(o.Checks) != 2 || o.Healthy == nil || !*o.Healthy {
					return false, describeHealth(ph)
				}
			}
		}
		return true, ""
	})

	// Stop the primary's origin: the DNS answer moves to the backup.
	a.stop()
	var changed time.Time
	eventually(t, 15*time.Second, "the backup answers on both nodes", func() (bool, string) {
		for _, g := range nodes {
			got, status := dig(t, g.dns, "www.glb.example.com", "A")
			if status != "NOERROR" || !slices.Equal(got, []string{b.ip()}) {
				return false, status + " " + strings.Join(got, ",")
			}
			if changed.IsZero() {
				changed = time.Now() // the first node whose answer changed
			}
		}
		return true, ""
	})
	downs := []string{"origin_health down", "pool_health down", "failover " + backup}
	waitEvents := func(want []string, since time.Time) []hook {
		t.Helper()
		var got []hook
		eventually(t, 10*time.Second, "events "+strings.Join(want, ", "), func() (bool, string) {
			got = nil
			for _, h := range delivered(rcv.hooks(health)) {
				if !h.at.Before(since) {
					got = append(got, h)
				}
			}
			return len(got) >= len(want), describeHooks(rcv.hooks(health))
		})
		return got
	}
	kind := func(h hook) string { return h.event.Type + " " + h.event.Data.New }
	got := waitEvents(downs, time.Time{})
	for _, h := range got {
		if lag := h.at.Sub(changed); lag > 2*time.Second {
			t.Errorf("%s arrived %v after the DNS answer changed; want within 2 s", kind(h), lag.Round(time.Millisecond))
		} else {
			t.Logf("%s arrived %v after the DNS answer changed", kind(h), lag.Round(time.Millisecond))
		}
	}
	// Exactly one of each, not one per node: nothing more comes.
	consistently(t, 3*time.Second, "no second event for one transition", func() (bool, string) {
		d := delivered(rcv.hooks(health))
		return len(d) == len(downs), describeHooks(rcv.hooks(health))
	})
	for i, h := range got {
		if kind(h) != downs[i] {
			t.Errorf("event %d is %s, want %s%s", i, kind(h), downs[i], describeHooks(got))
		}
	}
	if e := got[2].event; e.Data.LoadBalancer != lb || e.Data.Old != primary || !strings.Contains(e.Data.Summary, "backup") {
		t.Errorf("failover event %+v: want load balancer %s from %s to %s", e.Data, lb, primary, backup)
	}
	if e := got[0].event; e.Data.Origin != "a" || e.Data.Pool != primary || e.Data.Old != "up" || e.Data.Reason == "" {
		t.Errorf("origin event %+v", e.Data)
	}

	// Back up: the matching up events, once each.
	restarted := time.Now()
	a.start()
	ups := []string{"origin_health up", "pool_health up", "failover " + primary}
	got = waitEvents(ups, restarted)
	consistently(t, 3*time.Second, "no second up event", func() (bool, string) {
		return len(delivered(rcv.hooks(health))) == len(downs)+len(ups), describeHooks(rcv.hooks(health))
	})
	for i, h := range got {
		if kind(h) != ups[i] {
			t.Errorf("up event %d is %s, want %s%s", i, kind(h), ups[i], describeHooks(got))
		}
	}

	// The receiver fails while configuration changes record events, and
	// the node that retries them is killed: the other node delivers them
	// all once the receiver is back, in order, none missing.
	cfgPath := "/config"
	cfgSub := rcv.subscribe(t, n1, cfgPath, "config")
	rcv.SetStatus(http.StatusInternalServerError)
	outage := time.Now()
	var written []string
	for i := range 8 {
		m := n2.must("POST", "/api/v1/monitors", map[string]any{"type": "tcp", "port": 1000 + i})
		written = append(written, m["id"].(string))
	}
	eventually(t, 10*time.Second, "the receiver sees retries", func() (bool, string) {
		return len(rcv.hooks(cfgPath)) >= 3, describeHooks(rcv.hooks(cfgPath))
	})
	// Kill the node whose log shows it retrying; the other goes on.
	var victim, survivor *glbd
	eventually(t, 10*time.Second, "a node logs a retry", func() (bool, string) {
		for i, g := range nodes {
			if strings.Contains(g.logs.String(), "event delivery failed; will retry") && strings.Contains(g.logs.String(), cfgSub) {
				victim, survivor = g, nodes[1-i]
				return true, ""
			}
		}
		return false, "no retry logged"
	})
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-victim.done
	killedAt := time.Now()
	// The survivor keeps trying while the receiver fails.
	eventually(t, 15*time.Second, "the surviving node retries", func() (bool, string) {
		for _, h := range rcv.hooks(cfgPath) {
			if h.at.After(killedAt) {
				return true, ""
			}
		}
		return false, describeHooks(rcv.hooks(cfgPath))
	})
	if d := time.Since(outage); d < 5*time.Second {
		consistently(t, 5*time.Second-d, "nothing delivered while the receiver fails", func() (bool, string) {
			return len(delivered(rcv.hooks(cfgPath))) == 0, describeHooks(rcv.hooks(cfgPath))
		})
	}
	rcv.SetStatus(http.StatusOK)
	var arrived []hook
	eventually(t, 20*time.Second, "every config event delivered after the outage", func() (bool, string) {
		arrived = delivered(rcv.hooks(cfgPath))
		return len(arrived) == len(written), describeHooks(rcv.hooks(cfgPath))
	})
	for i, h := range arrived {
		if h.event.Data.Object != written[i] || h.event.Data.Kind != "monitors" || h.event.Data.New != "create" {
			t.Errorf("config event %d: %s %s %s, want the create of monitor %s%s", i, h.event.Data.Kind, h.event.Data.Object, h.event.Data.New, written[i], describeHooks(arrived))
		}
	}
	// Every request carried a signature the receiver verified.
	for _, p := range []string{health, cfgPath} {
		for _, h := range rcv.hooks(p) {
			if h.bad != "" {
				t.Errorf("%s: %s %s: %s", p, h.event.Type, h.event.ID, h.bad)
			}
		}
	}
	// The delivery log shows the attempts.
	var log struct{ Result []pools.Delivery }
	survivor.call("GET", "/api/v1/notifications/"+cfgSub+"/deliveries?per_page=100", nil, &log)
	if len(log.Result) != len(written) {
		t.Fatalf("delivery log: %d entries, want %d", len(log.Result), len(written))
	}
	first := log.Result[len(log.Result)-1]
	if first.Status != pools.DeliveryDelivered || first.Attempts < 2 || first.LastStatus != http.StatusOK || first.DeliveredAt == nil {
		t.Errorf("first delivery %+v: want delivered after failed attempts", first)
	}
}
