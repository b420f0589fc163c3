package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/glb-dns/glb/pools"
)

// lastGoodWriter writes the last good configuration after it is served,
// off the path from a change to DNS: writing a large configuration takes
// longer than compiling a change to it. Saves that come faster than one
// write per minInterval (or per 10 × the last write's duration, when
// longer: a million origins make a file of hundreds of megabytes) coalesce
// into the newest, so that a burst of changes does not spend the CPU and
// the disk the next change needs on writing the whole estate again and
// again; each write is still atomic (saveLastGood).
type lastGoodWriter struct {
	dir         string
	log         *slog.Logger
	minInterval time.Duration

	// enc keeps the encoding of the objects written before (run only).
	enc *configEncoder

	mu      sync.Mutex
	pending *pools.Config
	wake    chan struct{}
	// stopped is closed when run has written what was left.
	stopped chan struct{}
}

func newLastGoodWriter(dir string, log *slog.Logger) *lastGoodWriter {
	return &lastGoodWriter{dir: dir, log: log.With("component", "lastgood"), minInterval: time.Second, enc: &configEncoder{},
		wake: make(chan struct{}, 1), stopped: make(chan struct{})}
}

// save queues cfg to be written; it never waits for the disk.
func (w *lastGoodWriter) save(cfg *pools.Config) {
	w.mu.Lock()
	w.pending = cfg
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// run writes what is queued until ctx ends, then writes what is left.
func (w *lastGoodWriter) run(ctx context.Context) {
	defer close(w.stopped)
	for {
		select {
		case <-ctx.Done():
			w.writePending()
			return
		case <-w.wake:
			start := time.Now()
			w.writePending()
			select {
			case <-ctx.Done():
			case <-time.After(w.pause(time.Since(start))):
			}
		}
	}
}

// pause is how long to wait after a write that took took: writing keeps
// to a tenth of the time at most.
func (w *lastGoodWriter) pause(took time.Duration) time.Duration {
	return max(w.minInterval, 10*took)
}

func (w *lastGoodWriter) writePending() {
	w.mu.Lock()
	cfg := w.pending
	w.pending = nil
	w.mu.Unlock()
	if cfg == nil {
		return
	}
	if err := saveLastGood(w.dir, cfg, w.enc); err != nil {
		w.log.Error("saving the last good snapshot", "revision", cfg.Revision, "err", err)
	}
}

// wait returns once run has stopped (or after d), so that a node that
// shuts down leaves its newest configuration on disk.
func (w *lastGoodWriter) wait(d time.Duration) {
	select {
	case <-w.stopped:
	case <-time.After(d):
	}
}
