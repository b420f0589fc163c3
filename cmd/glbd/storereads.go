package main

import (
	"context"
	"maps"
	"time"

	"github.com/glb-dns/glb/pools"
)

// storeReads runs the node loop's store reads (health, revision,
// configuration, words fed in) beside the loop, one of each kind at a time, and hands
// their results back to it, which applies them. While the store is
// unreachable each read lasts until its deadline; on the loop, they
// followed one another and held up everything else, our own checks' news
// among them: a failover this node saw itself waited seconds for a store
// it does not need.
type storeReads struct {
	ctx      context.Context
	n        *node
	health   background[healthRead]
	revision background[revisionRead]
	config   background[configRead]
	feeds    background[feedsRead]
}

type healthRead struct {
	ups []pools.HealthUpdate
	err error
}

type revisionRead struct {
	rev int64
	err error
}

type feedsRead struct {
	words []pools.FeedWord
	err   error
}

type configRead struct {
	base, cfg *pools.Config
	err       error
}

func newStoreReads(ctx context.Context, n *node) *storeReads {
	return &storeReads{ctx: ctx, n: n, health: newBackground[healthRead](),
		revision: newBackground[revisionRead](), config: newBackground[configRead](), feeds: newBackground[feedsRead]()}
}

// readHealth reads what the others published since the cursors.
func (r *storeReads) readHealth() {
	r.health.start(func() func() healthRead {
		cursors := maps.Clone(r.n.cursors)
		return func() healthRead {
			ups, err := r.n.fetchHealth(r.ctx, cursors)
			return healthRead{ups, err}
		}
	})
}

// readRevision reads the store's revision.
func (r *storeReads) readRevision() {
	r.revision.start(func() func() revisionRead {
		return func() revisionRead {
			rctx, cancel := context.WithTimeout(r.ctx, 2*time.Second)
			defer cancel()
			rev, err := r.n.store.Revision(rctx)
			return revisionRead{rev, err}
		}
	})
}

// readFeeds reads the words fed in.
func (r *storeReads) readFeeds() {
	r.feeds.start(func() func() feedsRead {
		return func() feedsRead {
			ws, err := r.n.fetchFeeds(r.ctx)
			return feedsRead{ws, err}
		}
	})
}

// readConfig reads the configuration that follows the served one.
func (r *storeReads) readConfig() {
	r.config.start(func() func() configRead {
		base, fromFile := r.n.cfg, r.n.fromFile
		return func() configRead {
			cfg, err := r.n.nextConfig(r.ctx, base, fromFile)
			return configRead{base, cfg, err}
		}
	})
}

// background is one kind of read, run beside the loop one at a time.
// The loop owns it: start and ended are called on the loop only.
type background[T any] struct {
	busy bool
	// again: asked for while a read was under way, which may have missed
	// what prompted the asking; another follows once it ends.
	again bool
	done  chan T
}

func newBackground[T any]() background[T] { return background[T]{done: make(chan T, 1)} }

// start runs a read unless one is under way. prepare runs on the loop and
// takes what the read needs of the loop's state; the read it returns runs
// in the background, and its result arrives on done.
func (b *background[T]) start(prepare func() func() T) {
	if b.busy {
		b.again = true
		return
	}
	b.busy, b.again = true, false
	read := prepare()
	go func() { b.done <- read() }()
}

// ended notes that the result taken from done ends the read under way,
// and says whether another was asked for meanwhile.
func (b *background[T]) ended() (again bool) {
	b.busy = false
	return b.again
}
