package notify_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/glb-dns/glb/notify"
	"github.com/glb-dns/glb/pools"
)

// clock is a settable time for the worker: a test moves it past a
// delivery's next attempt instead of waiting for it.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// TestRetryWaitsTheConfiguredBackoff: after the n-th failed attempt the
// worker records the next attempt Base × 2^(n-1) later (a tenth of jitter
// on top), as notify.Retry says: not one doubling less. The worker runs
// against a real receiver that fails, on a clock the test moves to each
// next attempt.
func TestRetryWaitsTheConfiguredBackoff(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	rcv := newReceiver(t)
	rcv.SetStatus(http.StatusServiceUnavailable)
	ctx := context.Background()
	sub, err := s.CreateSubscription(ctx, pools.Subscription{Name: "slack", URL: rcv.URL + "/slack", Format: pools.FormatSlack,
		Events: []string{pools.EventPoolHealth}})
	if err != nil {
		t.Fatal(err)
	}
	t0 := pools.StoreTime(time.Now())
	if _, err := s.RecordStates(ctx, []pools.StateChange{poolChange("web", pools.StateDown, t0)}); err != nil {
		t.Fatal(err)
	}
	clk := &clock{now: t0}
	base := time.Minute
	w := notify.NewWorker(notify.Options{Store: s, Node: "n1", Poll: 20 * time.Millisecond, Timeout: 2 * time.Second,
		Retry: notify.Retry{Base: base, Max: time.Hour}, Now: clk.Now, Outbound: loopbackAllowed(t)})
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { w.Run(wctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	delivery := func() pools.Delivery {
		l, err := s.Deliveries(ctx, sub.ID, pools.Page{})
		if err != nil || len(l.Items) != 1 {
			t.Fatalf("deliveries %+v %v", l, err)
		}
		return l.Items[0]
	}
	want := base
	for n := 1; n <= 4; n++ {
		var d pools.Delivery
		waitFor(t, fmt.Sprintf("failed attempt %d", n), func() bool { d = delivery(); return d.Attempts == n })
		if d.NextAttempt == nil || d.LastAttempt == nil {
			t.Fatalf("attempt %d: no next or last attempt recorded: %+v", n, d)
		}
		if wait := d.NextAttempt.Sub(*d.LastAttempt); wait < want || wait > want+want/10 {
			t.Fatalf("after %d failed attempts the retry waits %v, want %v to %v (Base %v doubled %d times)", n, wait, want, want+want/10, base, n-1)
		}
		if got := len(rcv.Requests("/slack")); got != n {
			t.Fatalf("the receiver saw %d attempts, want %d", got, n)
		}
		clk.set(*d.NextAttempt)
		w.Kick()
		want *= 2
	}
}
