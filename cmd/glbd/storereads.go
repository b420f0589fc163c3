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
	pace     healthPace
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

// Every node publishes at least once a cadence and NOTIFYs when something
// changed, so a fleet of N nodes prompts N reads each of up to N/cadence
// a second: N² reads of N nodes' heartbeats. A notification is read at
// once only when the last read started healthGap ago or more; sooner, the
// news waits for the rest of the gap and one read takes all of it.
const healthGap = time.Second

// quietRead is how long health goes unread without news: half the
// publication cadence, at least healthGap. A heartbeat without news
// moves its time without a notification; read this often, the newest
// one a node has seen is at most 1.5 cadences old between reads, and its
// votes stay fresh for 3 check periods (each at least a cadence). Reading
// every second regardless cost 64 nodes at a 10 s cadence a third of the
// server again (bench/fleet).
func quietRead(cadence time.Duration) time.Duration { return max(healthGap, cadence/2) }

// healthPace decides when health is read.
type healthPace struct {
	at   time.Time // the last read started
	news bool      // a notification came since, held back by healthGap
}

// notified is a change the store announced at now: 0 to read it at once,
// else how long until it is read (the rest of the gap).
func (p *healthPace) notified(now time.Time) time.Duration {
	if wait := healthGap - now.Sub(p.at); wait > 0 {
		p.news = true
		return wait
	}
	return 0
}

// due says whether a read is due at now: news held back whose gap has
// ended, or quiet since the last read. Reads without news come on a
// one-second tick: a read is due at the tick nearest to quiet.
func (p *healthPace) due(now time.Time, quiet time.Duration) bool {
	since := now.Sub(p.at)
	return p.news && since >= healthGap || since >= quiet-healthGap/2
}

// reading notes a read starting at now.
func (p *healthPace) reading(now time.Time) { p.at, p.news = now, false }

// healthNotified reads a change the store announced, or returns how long
// until healthDue should be called to read it.
func (r *storeReads) healthNotified() time.Duration {
	wait := r.pace.notified(time.Now())
	if wait == 0 {
		r.readHealth()
	}
	return wait
}

// healthDue reads if healthPace says a read is due; false when it did not.
func (r *storeReads) healthDue() bool {
	if !r.pace.due(time.Now(), quietRead(r.n.checker.PublishEvery())) {
		return false
	}
	r.readHealth()
	return true
}

// readHealth reads what the others published since the cursors.
func (r *storeReads) readHealth() {
	r.pace.reading(time.Now())
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
