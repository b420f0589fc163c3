package main

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

// TestLastGoodWriterCoalesces: saves that come while a write is pending
// or within the minimum interval end as one write of the newest, and the
// newest is on disk once the writer stops.
func TestLastGoodWriterCoalesces(t *testing.T) {
	dir := t.TempDir()
	w := newLastGoodWriter(dir, slog.New(slog.DiscardHandler))
	w.minInterval = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.run(ctx); close(done) }()
	w.save(&pools.Config{Revision: 1})
	deadline := time.Now().Add(10 * time.Second)
	for {
		cfg, err := loadLastGood(dir)
		if err == nil && cfg.Revision == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("revision 1 not written within 10s: %v, %v", cfg, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for rev := int64(2); rev <= 50; rev++ {
		w.save(&pools.Config{Revision: rev})
	}
	if cfg, err := loadLastGood(dir); err != nil || cfg.Revision != 1 {
		t.Fatalf("within the minimum interval the file holds %v (%v); want revision 1 still", cfg, err)
	}
	cancel()
	<-done
	if cfg, err := loadLastGood(dir); err != nil || cfg.Revision != 50 {
		t.Fatalf("after stopping the file holds %v (%v); want the newest, revision 50", cfg, err)
	}
}

// TestLastGoodWriterPausesInProportion: a write that takes long (a large
// estate) is followed by a pause ten times as long, so that writing the
// file takes at most a tenth of the node's time; a quick one by the
// minimum interval.
func TestLastGoodWriterPausesInProportion(t *testing.T) {
	w := newLastGoodWriter(t.TempDir(), slog.New(slog.DiscardHandler))
	if got := w.pause(10 * time.Millisecond); got != time.Second {
		t.Errorf("after a 10 ms write: pause %v, want the 1 s minimum", got)
	}
	if got := w.pause(800 * time.Millisecond); got != 8*time.Second {
		t.Errorf("after an 800 ms write: pause %v, want 8 s", got)
	}
}
