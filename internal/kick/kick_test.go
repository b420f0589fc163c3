package kick

import (
	"context"
	"testing"
	"time"
)

// flushed waits for one flush, failing the test after 10 s without one.
func flushed(t *testing.T, flushes <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-flushes:
	case <-time.After(10 * time.Second):
		t.Fatalf("no flush: %s", what)
	}
}

// TestSendsCoalesce: sends while the writer is busy wake it once more,
// never block the sender, and each wake-up is one flush.
func TestSendsCoalesce(t *testing.T) {
	s := New()
	for range 5 {
		s.Send()
	}
	ctx, cancel := context.WithCancel(context.Background())
	flushes := make(chan struct{}, 10)
	done := make(chan struct{})
	go func() {
		s.Retrying(ctx, time.Hour, func(context.Context) { flushes <- struct{}{} })
		close(done)
	}()
	flushed(t, flushes, "five sends before the writer ran")
	select {
	case <-flushes:
		t.Fatal("five sends before the writer ran flushed twice")
	case <-time.After(50 * time.Millisecond):
	}
	s.Send()
	flushed(t, flushes, "a send to an idle writer")
	cancel()
	<-done
}

// TestRetriesOnThePeriod: without a send, flush runs every period.
func TestRetriesOnThePeriod(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	flushes := make(chan struct{})
	go New().Retrying(ctx, time.Millisecond, func(context.Context) {
		select {
		case flushes <- struct{}{}:
		case <-ctx.Done():
		}
	})
	for range 3 {
		flushed(t, flushes, "on the retry period")
	}
}
