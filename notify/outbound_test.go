package notify_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/glb-dns/glb/internal/tabledns"
	"github.com/glb-dns/glb/internal/webhooktest"
	"github.com/glb-dns/glb/notify"
	"github.com/glb-dns/glb/outbound"
	"github.com/glb-dns/glb/pools"
)

// TestDeliveryRefusedByDefault: under the default policy a subscription
// to a loopback receiver (stored past the API's check, as one written
// before the policy was) is refused at the connection: the attempt is
// recorded as refused, naming the rule, and the receiver sees nothing.
func TestDeliveryRefusedByDefault(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	rcv := newReceiver(t)
	ctx := context.Background()
	sub, err := s.CreateSubscription(ctx, pools.Subscription{Name: "local", URL: rcv.URL + "/local", Format: pools.FormatSlack,
		Events: []string{pools.EventPoolHealth}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordStates(ctx, []pools.StateChange{poolChange("web", pools.StateDown, pools.StoreTime(time.Now()))}); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	ctx2, cancel := context.WithCancel(ctx)
	w := notify.NewWorker(notify.Options{Store: s, Node: "n1", Poll: 20 * time.Millisecond, Retry: notify.Retry{Base: time.Hour},
		Timeout: 2 * time.Second, Metrics: notify.NewMetrics(reg)})
	done := make(chan struct{})
	go func() { w.Run(ctx2); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	var d pools.Delivery
	waitFor(t, "the attempt recorded", func() bool {
		l, _ := s.Deliveries(ctx, sub.ID, pools.Page{})
		if len(l.Items) == 1 && l.Items[0].Attempts == 1 {
			d = l.Items[0]
			return true
		}
		return false
	})
	if d.Status != pools.DeliveryPending || d.LastStatus != 0 || !strings.HasPrefix(d.LastError, "refused: ") ||
		!strings.Contains(d.LastError, "loopback 127.0.0.0/8") {
		t.Fatalf("delivery %+v: want pending, refused by the loopback rule, no status", d)
	}
	if got := rcv.all(); len(got) != 0 {
		t.Fatalf("the receiver got %d requests", len(got))
	}
	if n := refusedCount(t, reg); n != 1 {
		t.Errorf("glb_notify_delivery_failures_total{outcome=\"refused\"} = %v, want 1", n)
	}
}

// refusedCount reads the refused delivery attempts counted in reg.
func refusedCount(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, mf := range mfs {
		if mf.GetName() != "glb_notify_delivery_failures_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" && l.GetValue() == "refused" {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return n
}

// TestDeliveryRebindingRefused: the receiver's name resolves to an
// allowed address for the first event and to a refused one for the
// second (a DNS server the test controls answers the worker's lookups):
// the first is delivered, the second refused at the connection, recorded
// as such, and the receiver at the refused address sees no request.
func TestDeliveryRebindingRefused(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	good := webhooktest.NewReceiverOn(t, "127.0.0.2:0")
	_, port := splitPort(t, good.URL)
	bad := webhooktest.NewReceiverOn(t, "127.0.0.3:"+port)
	ns := tabledns.Start(t)
	ns.Set("hooks.rebind.test", "127.0.0.2")
	ctx := context.Background()
	sub, err := s.CreateSubscription(ctx, pools.Subscription{Name: "rebind", URL: "http://hooks.rebind.test:" + port + "/in",
		Format: pools.FormatSlack, Events: []string{pools.EventPoolHealth}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := outbound.New([]string{"127.0.0.2"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	runWorkerTo(t, s, notify.Retry{Base: time.Hour}, p, outbound.Resolver(ns.Addr))
	t0 := pools.StoreTime(time.Now())
	if _, err := s.RecordStates(ctx, []pools.StateChange{poolChange("web", pools.StateDown, t0)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first event delivered", func() bool { return len(good.Requests("/in")) == 1 })
	ns.Set("hooks.rebind.test", "127.0.0.3")
	if _, err := s.RecordStates(ctx, []pools.StateChange{poolChange("web", pools.StateUp, t0.Add(time.Second))}); err != nil {
		t.Fatal(err)
	}
	var last pools.Delivery
	waitFor(t, "the second attempted", func() bool {
		l, _ := s.Deliveries(ctx, sub.ID, pools.Page{})
		if len(l.Items) == 2 && l.Items[0].Attempts == 1 {
			last = l.Items[0]
			return true
		}
		return false
	})
	if last.Status != pools.DeliveryPending || !strings.HasPrefix(last.LastError, "refused: ") ||
		!strings.Contains(last.LastError, "hooks.rebind.test (127.0.0.3)") {
		t.Fatalf("second delivery %+v: want refused at 127.0.0.3", last)
	}
	if n := len(bad.Requests("")); n != 0 {
		t.Fatalf("the refused address got %d requests", n)
	}
	if n := len(good.Requests("")); n != 1 {
		t.Fatalf("the allowed address got %d requests, want the first event only", n)
	}
}

func splitPort(t *testing.T, url string) (host, port string) {
	t.Helper()
	i := strings.LastIndexByte(url, ':')
	if i < 0 {
		t.Fatalf("no port in %s", url)
	}
	return url[:i], url[i+1:]
}
