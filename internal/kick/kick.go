// Package kick is the wake-up of a write-behind queue: producers hand work
// over under their own lock and send a Signal, and one goroutine writes it
// out, again on a fixed period while the store refuses. glbd's health
// audit and the notification observer are both such queues.
package kick

import (
	"context"
	"time"
)

// Signal wakes the one goroutine that writes. Sends never block and
// coalesce: however many arrive while it writes, it writes once more.
type Signal chan struct{}

// New returns a Signal with room for the one pending wake-up.
func New() Signal { return make(Signal, 1) }

// Send wakes the writer, or leaves the wake-up already pending.
func (s Signal) Send() {
	select {
	case s <- struct{}{}:
	default:
	}
}

// Retrying calls flush whenever s is sent and every period besides, so
// that what a refusing store left pending is retried, until ctx ends.
func (s Signal) Retrying(ctx context.Context, every time.Duration, flush func(context.Context)) {
	retry := time.NewTicker(every)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s:
		case <-retry.C:
		}
		flush(ctx)
	}
}
