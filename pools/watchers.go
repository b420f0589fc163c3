package pools

import (
	"context"
	"sync"
)

// Watchers fans a store's changes out to its Watch callers. A writer never
// waits on a slow reader: each reader has a one-slot buffer, and a change
// that finds the slot full is merged into the pending one (the higher
// revision, health, a drain or feeds if either says so), which is all a
// reader needs to decide to reload.
type Watchers struct {
	mu     sync.Mutex
	subs   map[chan Change]struct{}
	closed bool
}

// Add returns a channel of changes that is closed when ctx ends or the
// watchers are closed.
func (w *Watchers) Add(ctx context.Context) <-chan Change {
	ch := make(chan Change, 1)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		close(ch)
		return ch
	}
	if w.subs == nil {
		w.subs = map[chan Change]struct{}{}
	}
	w.subs[ch] = struct{}{}
	context.AfterFunc(ctx, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if _, ok := w.subs[ch]; ok {
			delete(w.subs, ch)
			close(ch)
		}
	})
	return ch
}

// Len is the number of open watch channels.
func (w *Watchers) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.subs)
}

// Notify reports c to every reader without blocking.
func (w *Watchers) Notify(c Change) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ch := range w.subs {
		select {
		case ch <- c:
			continue
		default:
		}
		merged := c
		select {
		case old := <-ch:
			merged.Revision = max(merged.Revision, old.Revision)
			merged.Health = merged.Health || old.Health
			merged.Drain = merged.Drain || old.Drain
			merged.Feeds = merged.Feeds || old.Feeds
		default:
		}
		// The slot is empty now and only Notify sends, under the lock.
		ch <- merged
	}
}

// Close closes every watch channel; later Adds get a closed channel.
func (w *Watchers) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	for ch := range w.subs {
		delete(w.subs, ch)
		close(ch)
	}
}
