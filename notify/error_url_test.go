package notify_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/glb-dns/glb/notify"
	"github.com/glb-dns/glb/outbound"
	"github.com/glb-dns/glb/pools"
)

// lockedBuffer is a log sink the worker's goroutines write to at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestDeliveryErrorKeepsNoURL: for Slack and PagerDuty the receiver's URL
// is the credential (Slack's path is the webhook's secret). A delivery
// that fails without an answer, the receiver refusing the connection or
// the outbound policy refusing the address, stores an error that says
// what went wrong but neither the URL nor its secret path or query, and
// the worker's logs (at debug) carry neither.
func TestDeliveryErrorKeepsNoURL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, why string
		policy    func(t *testing.T) *outbound.Policy
	}{
		{"connection refused", "connection refused", loopbackAllowed},
		{"outbound policy", "loopback", func(*testing.T) *outbound.Policy { return nil }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			deliveryErrorKeepsNoURL(t, c.policy(t), c.why)
		})
	}
}

func deliveryErrorKeepsNoURL(t *testing.T, policy *outbound.Policy, why string) {
	// A loopback port nobody listens on: the connection is refused.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	const path, query = "/services/T0000/B0000/XsEcReTsLaCkPaTh", "token=sEcReTqUeRy"
	hook := "http://" + addr + path + "?" + query
	s := openStore(t)
	ctx := context.Background()
	subs := map[string]pools.Subscription{
		pools.FormatSlack: {Name: "slack", URL: hook, Format: pools.FormatSlack, Events: []string{pools.EventPoolHealth}},
		pools.FormatPagerDuty: {Name: "pd", URL: hook, Format: pools.FormatPagerDuty, Events: []string{pools.EventPoolHealth},
			Secret: "R0UTING0KEY0123456789012345678901"},
	}
	for f, sub := range subs {
		got, err := s.CreateSubscription(ctx, sub)
		if err != nil {
			t.Fatal(err)
		}
		sub.ID = got.ID
		subs[f] = sub
	}
	if _, err := s.RecordStates(ctx, []pools.StateChange{poolChange("web", pools.StateDown, pools.StoreTime(time.Now()))}); err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	w := notify.NewWorker(notify.Options{Store: s, Node: "n1", Poll: 20 * time.Millisecond, Timeout: 2 * time.Second,
		Retry: notify.Retry{Base: time.Hour}, Logger: log, Outbound: policy})
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { w.Run(wctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	secrets := []string{hook, path, query, "XsEcReTsLaCkPaTh", "sEcReTqUeRy"}
	for f, sub := range subs {
		var d pools.Delivery
		waitFor(t, f+" delivery failed", func() bool {
			l, err := s.Deliveries(ctx, sub.ID, pools.Page{})
			if err != nil || len(l.Items) != 1 {
				return false
			}
			d = l.Items[0]
			return d.Attempts == 1
		})
		if !strings.Contains(d.LastError, why) {
			t.Errorf("%s: stored error %q does not say why (%s)", f, d.LastError, why)
		}
		for _, secret := range secrets {
			if strings.Contains(d.LastError, secret) {
				t.Errorf("%s: the stored delivery error %q holds %q", f, d.LastError, secret)
			}
		}
	}
	waitFor(t, "both failures logged", func() bool { return strings.Count(logs.String(), "will retry") >= 2 })
	cancel()
	<-done
	out := logs.String()
	if !strings.Contains(out, why) {
		t.Errorf("the logs do not say why the delivery failed:\n%s", out)
	}
	for _, secret := range secrets {
		if strings.Contains(out, secret) {
			t.Errorf("the logs hold %q:\n%s", secret, out)
		}
	}
}
