package healthcheck

import (
	"cmp"
	"context"
	"time"

	"github.com/glb-dns/glb/pools"
)

// Feeds is where the words of feed monitors come from (feeds.Table): the
// latest word of each origin under each feed monitor, as last read from
// the store.
type Feeds interface {
	// Ready reports that the words were read at least once: until then
	// a feed pair is not judged (it counts as unchecked, so up).
	Ready() bool
	// Word is the latest word of origin k under monitor, live or not.
	Word(k pools.OriginKey, monitor string) (pools.FeedWord, bool)
	// NextExpiry is the earliest expiry of a word after now; zero when
	// none expires later.
	NextExpiry(now time.Time) time.Time
}

// A feed monitor is not probed: its pairs take the words fed in, as if
// each were the result of a check, so that thresholds, monitor groups,
// the nodes' vote, explain and notifications treat them as they treat
// probes. The rules, per (origin, feed monitor) pair:
//
//   - A new word (received at another time) is one check: up or down, as
//     it says, through consecutive_up and consecutive_down.
//   - A word past its expiry is silent, and a silent feed sees the origin
//     up at once, whatever the thresholds (fail open): a feed that stops
//     talking must not hold an origin down. So does a feed never fed.
//   - Expiry is judged by this node's clock against the word's expiry;
//     every node does the same, and no node writes that a word expired.
//   - Meanwhile the pair's result is renewed on every pass, so that the
//     node keeps vouching for it (watch.state).
//
// One goroutine (feedLoop) judges every feed pair, when the words change
// (Refeed), when a word expires, and at least once per feed interval, so
// that its results follow one another in order.

// Refeed makes the checker judge the feed pairs again at once: the words
// changed.
func (c *Checker) Refeed() { signal(c.refeed) }

// feedLoop judges the feed pairs until ctx ends.
func (c *Checker) feedLoop(ctx context.Context) {
	defer c.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		timer.Reset(c.takeFeeds(time.Now()))
		select {
		case <-ctx.Done():
			return
		case <-c.refeed:
		case <-timer.C:
		}
	}
}

// feedVerdict is what a pass makes of one feed pair.
type feedVerdict uint8

const (
	feedSame    feedVerdict = iota // nothing new: the result is renewed
	feedWord                       // a new live word: one check
	feedSilence                    // expired or never fed: up at once
)

// takeFeeds judges every feed pair at now and says how long until the
// next pass is due.
func (c *Checker) takeFeeds(now time.Time) time.Duration {
	src := c.opts.Feeds
	c.mu.Lock()
	every := c.feedEvery
	if !src.Ready() || len(c.feeds) == 0 {
		c.mu.Unlock()
		return every
	}
	type judged struct {
		p *pair
		r result
		v feedVerdict
	}
	var todo []judged
	for _, p := range c.feeds {
		if p.removed {
			continue
		}
		w, ok := src.Word(p.w.key, p.monitor)
		live := ok && w.Live(now)
		switch {
		case live && !w.At.Equal(p.fedAt):
			todo = append(todo, judged{p, wordResult(&w), feedWord})
		case !live && (p.fedLive || !p.th.known):
			r := result{healthy: true}
			if ok {
				r.reason = "feed silent: its word expired at " + w.Expires.UTC().Format(time.RFC3339)
			}
			todo = append(todo, judged{p, r, feedSilence})
		default:
			p.checkedAt = now // still the word it took: renewed
			continue
		}
		p.fedAt, p.fedLive = w.At, live
	}
	c.mu.Unlock()
	for _, j := range todo {
		c.apply(j.p, j.r, 0, j.v == feedSilence)
	}
	wait := every
	if next := src.NextExpiry(now); !next.IsZero() {
		wait = min(wait, next.Sub(now))
	}
	return max(wait, time.Millisecond)
}

// wordResult is a live word as a check result.
func wordResult(w *pools.FeedWord) result {
	if w.Up {
		r := result{healthy: true}
		if w.Reason != "" {
			r.reason = w.Source + ": " + w.Reason
		}
		return r
	}
	return result{reason: w.Source + ": " + cmp.Or(w.Reason, "reported down")}
}

// isFeed reports whether p takes words rather than probes.
func (p *pair) isFeed() bool { return p.t.typ == pools.MonitorFeed }
