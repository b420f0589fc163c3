package notify_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/internal/testnode"
	"github.com/glb-dns/glb/internal/webhooktest"
	"github.com/glb-dns/glb/notify"
	"github.com/glb-dns/glb/outbound"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/pools/embedded/embeddedtest"
)

// receiver is a real HTTP endpoint that keeps what it is sent and checks
// Standard Webhooks signatures with its own code, not the sender's.
type receiver struct{ *webhooktest.Receiver }

type received struct {
	path   string
	header http.Header
	body   []byte
	signed bool // the signature checks out with the secret set for the path
}

func newReceiver(t *testing.T) receiver { return receiver{webhooktest.NewReceiver(t)} }

func (r receiver) all() []received {
	var out []received
	for _, q := range r.Requests("") {
		out = append(out, received{path: q.Path, header: q.Header, body: q.Body, signed: q.Bad == ""})
	}
	return out
}

func openStore(t *testing.T) pools.Store { return embeddedtest.Open(t) }

func runWorker(t *testing.T, s pools.Store, retry notify.Retry) *notify.Worker {
	return runWorkerTo(t, s, retry, loopbackAllowed(t), nil)
}

// loopbackAllowed is an outbound policy that lets deliveries reach the
// tests' receivers on 127.0.0.1.
func loopbackAllowed(t *testing.T) *outbound.Policy {
	p, err := outbound.New([]string{"127.0.0.1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// runWorkerTo runs a worker whose deliveries p allows, finding addresses
// with resolver (nil: the system's).
func runWorkerTo(t *testing.T, s pools.Store, retry notify.Retry, p *outbound.Policy, resolver *net.Resolver) *notify.Worker {
	ctx, cancel := context.WithCancel(context.Background())
	w := notify.NewWorker(notify.Options{Store: s, Node: "n1", Poll: 20 * time.Millisecond, Retry: retry, Timeout: 2 * time.Second,
		Outbound: p, Resolver: resolver})
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testnode.Eventually(t, 10*time.Second, what, func() (bool, string) { return cond(), "not yet" })
}

func poolChange(pool, state string, at time.Time) pools.StateChange {
	return pools.StateChange{Key: "pool/" + pool, State: state, Assume: pools.StateUp, Event: pools.Event{
		ID: pools.EventID("pool", pool, state, at.String()), Type: pools.EventPoolHealth, Time: at,
		Data: pools.EventData{Summary: "pool " + pool + " is " + state, Pool: pool, PoolName: pool, New: state, Pools: []string{pool}},
	}}
}

// TestStandardSignature: a standard delivery carries the Standard
// Webhooks headers and a signature the receiver verifies with the secret
// shown at creation; a receiver holding another secret refuses it, and
// the delivery stays pending with the 401 recorded, and only the 401:
// the receiver's answer ("bad signature: ...") is neither kept nor shown.
func TestStandardSignature(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	rcv := newReceiver(t)
	ctx := context.Background()
	good, err := s.CreateSubscription(ctx, pools.Subscription{Name: "good", URL: rcv.URL + "/signed/good", Format: pools.FormatStandard,
		Events: []string{pools.EventPoolHealth}, Secret: pools.NewWebhookSecret()})
	if err != nil {
		t.Fatal(err)
	}
	// The receiver of "wrong" was given another subscription's secret.
	wrong, err := s.CreateSubscription(ctx, pools.Subscription{Name: "wrong", URL: rcv.URL + "/signed/wrong", Format: pools.FormatStandard,
		Events: []string{pools.EventPoolHealth}, Secret: pools.NewWebhookSecret()})
	if err != nil {
		t.Fatal(err)
	}
	rcv.SetSecret("/signed/good", good.Secret)
	rcv.SetSecret("/signed/wrong", good.Secret)
	at := pools.StoreTime(time.Now())
	if _, err := s.RecordStates(ctx, []pools.StateChange{poolChange("web", pools.StateDown, at)}); err != nil {
		t.Fatal(err)
	}
	runWorker(t, s, notify.Retry{Base: time.Hour})
	waitFor(t, "both attempted", func() bool { return len(rcv.all()) >= 2 })
	for _, r := range rcv.all() {
		var e pools.Event
		if err := json.Unmarshal(r.body, &e); err != nil {
			t.Fatalf("body %s: %v", r.body, err)
		}
		if r.header.Get("webhook-id") != e.ID || e.Type != pools.EventPoolHealth || e.Data.Pool != "web" || e.Data.New != pools.StateDown || e.Data.Old != pools.StateUp {
			t.Errorf("%s: headers %v body %s", r.path, r.header, r.body)
		}
		if want := r.path == "/signed/good"; r.signed != want {
			t.Errorf("%s: signature verified %v, want %v", r.path, r.signed, want)
		}
	}
	waitFor(t, "attempts recorded", func() bool {
		g, _ := s.Deliveries(ctx, good.ID, pools.Page{})
		w, _ := s.Deliveries(ctx, wrong.ID, pools.Page{})
		return len(g.Items) == 1 && g.Items[0].Status == pools.DeliveryDelivered && g.Items[0].LastStatus == 200 &&
			len(w.Items) == 1 && w.Items[0].Status == pools.DeliveryPending && w.Items[0].LastStatus == 401 &&
			w.Items[0].LastError == "HTTP 401" && w.Items[0].Attempts == 1
	})
}

// TestSlackAndPagerDutyShapes: Slack gets an incoming-webhook message;
// PagerDuty gets an Events API v2 trigger when a pool goes down and a
// resolve with the trigger's dedup key when it comes back.
func TestSlackAndPagerDutyShapes(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	rcv := newReceiver(t)
	ctx := context.Background()
	if _, err := s.CreateSubscription(ctx, pools.Subscription{Name: "slack", URL: rcv.URL + "/slack", Format: pools.FormatSlack,
		Events: []string{pools.EventPoolHealth}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateSubscription(ctx, pools.Subscription{Name: "pd", URL: rcv.URL + "/pd", Format: pools.FormatPagerDuty,
		Events: []string{pools.EventPoolHealth}, Secret: "R0UTING0KEY0123456789012345678901"}); err != nil {
		t.Fatal(err)
	}
	t0 := pools.StoreTime(time.Now())
	if _, err := s.RecordStates(ctx, []pools.StateChange{poolChange("web", pools.StateDown, t0), poolChange("web", pools.StateUp, t0.Add(time.Second))}); err != nil {
		t.Fatal(err)
	}
	runWorker(t, s, notify.Retry{})
	waitFor(t, "four deliveries", func() bool { return len(rcv.all()) == 4 })
	var pd []map[string]any
	for _, r := range rcv.all() {
		if ct := r.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: Content-Type %q", r.path, ct)
		}
		var m map[string]any
		if err := json.Unmarshal(r.body, &m); err != nil {
			t.Fatalf("%s: %s: %v", r.path, r.body, err)
		}
		switch r.path {
		case "/slack":
			text, _ := m["text"].(string)
			if len(m) != 1 || !strings.Contains(text, "pool web is") {
				t.Errorf("slack message %s", r.body)
			}
		case "/pd":
			pd = append(pd, m)
		}
	}
	if len(pd) != 2 {
		t.Fatalf("pagerduty got %d events", len(pd))
	}
	trigger, resolve := pd[0], pd[1]
	if trigger["event_action"] != "trigger" || resolve["event_action"] != "resolve" {
		t.Fatalf("actions %v, %v: want trigger then resolve", trigger["event_action"], resolve["event_action"])
	}
	for _, m := range pd {
		if m["routing_key"] != "R0UTING0KEY0123456789012345678901" {
			t.Errorf("routing_key %v", m["routing_key"])
		}
	}
	if k, _ := trigger["dedup_key"].(string); k == "" || resolve["dedup_key"] != k {
		t.Errorf("dedup keys %v and %v: the resolve must carry the trigger's", trigger["dedup_key"], resolve["dedup_key"])
	}
	p, _ := trigger["payload"].(map[string]any)
	severities := map[any]bool{"critical": true, "error": true, "warning": true, "info": true}
	if p == nil || p["summary"] == "" || p["source"] == "" || !severities[p["severity"]] {
		t.Errorf("trigger payload %v: want summary, source and a severity of the Events API", p)
	}
	if s, _ := p["summary"].(string); !strings.Contains(s, "pool web is down") {
		t.Errorf("summary %q", s)
	}
}

// TestRetryInOrder: a receiver that fails gets the events again, in
// order: the second is not sent before the first is delivered.
func TestRetryInOrder(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	rcv := newReceiver(t)
	rcv.SetStatus(http.StatusInternalServerError)
	ctx := context.Background()
	sub, err := s.CreateSubscription(ctx, pools.Subscription{Name: "slack", URL: rcv.URL + "/slack", Format: pools.FormatSlack,
		Events: []string{pools.EventPoolHealth}})
	if err != nil {
		t.Fatal(err)
	}
	t0 := pools.StoreTime(time.Now())
	var changes []pools.StateChange
	for i := range 5 {
		st := pools.StateDown
		if i%2 == 1 {
			st = pools.StateUp
		}
		changes = append(changes, poolChange("web", st, t0.Add(time.Duration(i)*time.Millisecond)))
	}
	if _, err := s.RecordStates(ctx, changes); err != nil {
		t.Fatal(err)
	}
	runWorker(t, s, notify.Retry{Base: 10 * time.Millisecond, Max: 50 * time.Millisecond})
	waitFor(t, "three failed attempts", func() bool { return len(rcv.all()) >= 3 })
	for _, r := range rcv.all() {
		if !strings.Contains(string(r.body), "is down") {
			t.Fatalf("sent %s while the first event was not delivered", r.body)
		}
	}
	rcv.SetStatus(http.StatusNoContent)
	waitFor(t, "all delivered", func() bool {
		l, _ := s.Deliveries(ctx, sub.ID, pools.Page{})
		for _, d := range l.Items {
			if d.Status != pools.DeliveryDelivered {
				return false
			}
		}
		return len(l.Items) == 5
	})
	var order []string
	for _, r := range rcv.all() {
		var m map[string]string
		_ = json.Unmarshal(r.body, &m)
		if n := len(order); n == 0 || order[n-1] != m["text"] {
			order = append(order, m["text"])
		}
	}
	if len(order) != 5 {
		t.Fatalf("order of what arrived: %q", order)
	}
	for i, text := range order {
		want := "is down"
		if i%2 == 1 {
			want = "is up"
		}
		if !strings.Contains(text, want) {
			t.Errorf("event %d: %q, want %q", i, text, want)
		}
	}
}
