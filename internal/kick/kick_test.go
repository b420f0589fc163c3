package kick

import (
	"context"
	"testing"
	"time"
)

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
	<-flushes
	select {
	case <-flushes:
		t.Fatal("five sends before the writer ran flushed twice")
	case <-time.After(50 * time.Millisecond):
	}
	s.Send()
	<-flushes
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
		select {
		case <-flushes:
		case <-time.After(10 * time.Second):
			t.Fatal("no flush on the retry period")
		}
	}
}
