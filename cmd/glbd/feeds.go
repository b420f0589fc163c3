package main

import (
	"context"
	"time"

	"github.com/glb-dns/glb/pools"
)

// Words fed in (feeds.Table) reach the node from the store: read at
// start, on each Feeds notification, and every feedPoll besides (a
// notification may be lost while the listener reconnects). The checker
// takes the words as its feed monitors' results (Refeed); the loads go
// into the health the snapshots compile (withLoad).

// feedPoll backs up the notifications of words fed in.
const feedPoll = 10 * time.Second

// feedRetention is how long a word is kept after it expired: the console
// shows an expired word until then.
const feedRetention = 24 * time.Hour

// fetchFeeds reads every word stored.
func (n *node) fetchFeeds(ctx context.Context) ([]pools.FeedWord, error) {
	rctx, cancel := context.WithTimeout(ctx, storeProbe)
	defer cancel()
	return n.store.Feeds(rctx, "")
}

// takeFeeds installs the words read; when they changed, the checker
// judges its feed pairs again and the loads are taken anew. When the
// store could not be read the words stay as last read, and expire by the
// clock.
func (n *node) takeFeeds(ws []pools.FeedWord, err error) {
	if err != nil {
		n.log.Debug("reading the words fed in", "err", err)
		return
	}
	if n.feeds.Replace(ws) {
		n.checker.Refeed()
		n.rebuildHealth()
	}
}

// loadCache is the loads last taken from the words, and what they hold
// for: the words' generation, the configuration, and until when by the
// clock.
type loadCache struct {
	gen   uint64
	cfg   *pools.Config
	until time.Time
	load  map[string]map[string]float64
	// in and out: the health the loads were last put into, and the result.
	in, out *pools.Health
}

// withLoad is h with the loads the words report at now. It does the work
// only when the words, the configuration or the clock moved them, or h is
// new.
func (n *node) withLoad(h *pools.Health, now time.Time) *pools.Health {
	c := &n.loads
	if gen := n.feeds.Gen(); gen != c.gen || n.cfg != c.cfg || !c.until.IsZero() && !now.Before(c.until) {
		c.gen, c.cfg = gen, n.cfg
		c.load, c.until = n.feeds.Loads(n.cfg, now)
		c.in = nil
	}
	if h != c.in {
		c.in, c.out = h, h.WithLoad(c.load)
	}
	return c.out
}
