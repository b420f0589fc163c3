package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestPruneOld: the first prune runs at once, for what is older than the
// retention, and its outcome is logged: what was deleted, or why not.
func TestPruneOld(t *testing.T) {
	for _, c := range []struct {
		n    int
		err  error
		want string
	}{
		{3, nil, `level=INFO msg="ended shifts pruned" shifts=3 retention=1h0m0s`},
		{0, errors.New("store down"), `level=WARN msg="pruning ended shifts" err="store down"`},
	} {
		logs := &signalWriter{wrote: make(chan struct{}, 1)}
		ctx, cancel := context.WithCancel(context.Background())
		asked := make(chan time.Time, 1)
		done := make(chan struct{})
		go func() {
			defer close(done)
			pruneOld(ctx, slog.New(slog.NewTextHandler(logs, nil)), time.Hour, func(_ context.Context, before time.Time) (int, error) {
				asked <- before
				return c.n, c.err
			}, "ended shifts", "shifts")
		}()
		before := <-asked
		// Cancelled only once the outcome is logged: a prune error seen after
		// the cancel is the shutdown's and is rightly not logged.
		<-logs.wrote
		cancel()
		<-done
		if age := time.Since(before); age < time.Hour || age > time.Hour+time.Minute {
			t.Errorf("pruned what is older than %v, want 1h", age)
		}
		if !strings.Contains(logs.buf.String(), c.want) {
			t.Errorf("log %q, want %q", logs.buf.String(), c.want)
		}
	}
}

// signalWriter is a log destination that says when a line was written.
type signalWriter struct {
	buf   bytes.Buffer
	wrote chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	n, err := w.buf.Write(p)
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return n, err
}
