package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/glb-dns/glb/internal/version"
	"github.com/glb-dns/glb/outbound"
	"github.com/glb-dns/glb/pools"
)

// Options configure a Worker.
type Options struct {
	Store pools.NotifyStore
	// Node names this node in the claims it takes.
	Node string
	// Retry is the backoff of failed deliveries.
	Retry Retry
	// Lease is how long a claim is this node's: another node takes the
	// delivery over when it runs out (this node died). Default 1m; it
	// must outlast Timeout.
	Lease time.Duration
	// Timeout bounds one attempt. Default 10s.
	Timeout time.Duration
	// Poll is how often the outbox is looked at without a kick. Default
	// 1s.
	Poll time.Duration
	// Outbound is where deliveries may go, checked on the address each
	// connection is made to; nil is outbound's default policy (no
	// loopback, private, link-local, ... receiver). Redirects are not
	// followed: a 3xx is a failure, the URL is wrong.
	Outbound *outbound.Policy
	// Resolver finds the receivers' addresses; nil is the system's.
	Resolver *net.Resolver
	Logger   *slog.Logger
	Metrics  *Metrics
	Now      func() time.Time
}

// Worker delivers the outbox: it claims each subscription's oldest due
// delivery, sends it, and records the attempt, until none is due.
type Worker struct {
	o      Options
	client *http.Client
	log    *slog.Logger
	kick   chan struct{}
}

// NewWorker returns a Worker; Run it.
func NewWorker(o Options) *Worker {
	o.Retry = o.Retry.withDefaults()
	if o.Lease <= 0 {
		o.Lease = time.Minute
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Worker{o: o, client: o.Outbound.Client(o.Timeout, o.Resolver), log: o.Logger.With("component", "notify"), kick: make(chan struct{}, 1)}
}

// Kick has the worker look at the outbox now (an event was recorded).
func (w *Worker) Kick() {
	if w == nil {
		return
	}
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Run delivers until ctx ends.
func (w *Worker) Run(ctx context.Context) {
	poll := time.NewTicker(w.o.Poll)
	defer poll.Stop()
	backlogEvery := max(5*time.Second, w.o.Poll)
	var lastBacklog time.Time
	for {
		w.drain(ctx)
		if now := w.o.Now(); now.Sub(lastBacklog) >= backlogEvery {
			lastBacklog = now
			w.backlog(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-poll.C:
		case <-w.kick:
		}
	}
}

// drain delivers what is due until nothing is.
func (w *Worker) drain(ctx context.Context) {
	for ctx.Err() == nil {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		claims, err := w.o.Store.ClaimDeliveries(cctx, w.o.Node, w.o.Now(), w.o.Lease, 32)
		cancel()
		if err != nil {
			w.log.Debug("claiming deliveries", "err", err)
			return
		}
		if len(claims) == 0 {
			return
		}
		// Each claim is another subscription's head: in parallel.
		var wg sync.WaitGroup
		for i := range claims {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.deliver(ctx, &claims[i])
			}()
		}
		wg.Wait()
	}
}

// deliver makes one attempt and records it.
func (w *Worker) deliver(ctx context.Context, c *pools.Claim) {
	start := w.o.Now()
	code, err := w.send(ctx, c, start)
	a := pools.Attempt{At: w.o.Now(), Status: code}
	if err != nil {
		a.Error = err.Error()
		if len(a.Error) > 1000 {
			a.Error = a.Error[:1000]
		}
		a.Next = w.o.Retry.next(c.Attempts+1, c.Event.Time, a.At)
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	ferr := w.o.Store.FinishDelivery(fctx, w.o.Node, *c, a)
	cancel()
	if ferr != nil {
		// The lease runs out and another node (or this one) tries again:
		// the receiver may see the event twice, never lose it.
		w.log.Warn("recording a delivery attempt", "subscription", c.Subscription.ID, "event", c.Event.ID, "err", ferr)
	}
	took := w.o.Now().Sub(start)
	switch {
	case err == nil:
		w.o.Metrics.delivered(c.Subscription.Format, took)
		w.log.Debug("event delivered", "subscription", c.Subscription.ID, "event", c.Event.ID, "type", c.Event.Type, "status", code)
	case outbound.Refusal(err) != nil && !a.Next.IsZero():
		// Not the receiver's fault: the URL leads where this node may
		// not send (it resolves elsewhere now, or the policy changed).
		w.o.Metrics.failed(c.Subscription.Format, "refused")
		w.log.Warn("event delivery refused by the outbound policy; will retry", "subscription", c.Subscription.ID, "event", c.Event.ID,
			"attempts", c.Attempts+1, "next", a.Next, "err", err)
	case a.Next.IsZero():
		w.o.Metrics.failed(c.Subscription.Format, "given_up")
		w.log.Warn("event given up after the retry window", "subscription", c.Subscription.ID, "event", c.Event.ID,
			"attempts", c.Attempts+1, "err", err)
	default:
		w.o.Metrics.failed(c.Subscription.Format, "retry")
		w.log.Info("event delivery failed; will retry", "subscription", c.Subscription.ID, "event", c.Event.ID,
			"attempts", c.Attempts+1, "next", a.Next, "err", err)
	}
}

// send posts the event; a 2xx answer delivers it.
func (w *Worker) send(ctx context.Context, c *pools.Claim, now time.Time) (int, error) {
	req, err := render(c, now)
	if err != nil {
		return 0, err
	}
	rctx, cancel := context.WithTimeout(ctx, w.o.Timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(rctx, http.MethodPost, c.Subscription.URL, bytes.NewReader(req.body))
	if err != nil {
		return 0, err
	}
	hr.Header = req.header
	hr.Header.Set("User-Agent", "glb/"+version.String())
	resp, err := w.client.Do(hr)
	if re := outbound.Refusal(err); re != nil {
		// No request was sent: the connection was refused before it
		// was opened.
		return 0, fmt.Errorf("refused: %w", re)
	}
	if err != nil {
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) {
			err = ue.Unwrap() // "Post URL: ..." names the URL, which may be a credential
		}
		return 0, err
	}
	defer resp.Body.Close()
	// The body is read (so that the connection is reused) but neither
	// kept nor shown: whoever reads the delivery log learns the status
	// of what the URL leads to, never its content.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return resp.StatusCode, nil
}

// backlog updates the gauges of what waits.
func (w *Worker) backlog(ctx context.Context) {
	if w.o.Metrics == nil {
		return
	}
	bctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	b, err := w.o.Store.NotifyBacklog(bctx)
	cancel()
	if err != nil {
		return
	}
	w.o.Metrics.setBacklog(b, w.o.Now())
}
