// Package feeds holds the health and load other systems feed in (an
// Alertmanager webhook, a generic PUT): the latest word of each origin
// under each feed monitor of its pool's group, with its expiry, as last
// read from the store. It hands them to the health pipeline: the checker
// takes the words as the results of its feed monitors (healthcheck.Feeds),
// and the node takes the loads into the agreed health that snapshots
// compile (Loads).
//
// Every node reads the same words from the store and judges their expiry
// by its own clock; nothing is written when a word expires.
package feeds

import (
	"slices"
	"sync"
	"time"

	"github.com/glb-dns/glb/pools"
)

// Table is the words as last read. It is safe for concurrent use: the
// node replaces them, the checker and the node read them.
type Table struct {
	mu      sync.RWMutex
	ready   bool
	gen     uint64
	words   map[key]pools.FeedWord
	expires []time.Time // of every word, ascending
}

type key struct{ pool, origin, monitor string }

// Replace installs the words read from the store (FeedStore.Feeds) and
// reports whether they differ from those held.
func (t *Table) Replace(ws []pools.FeedWord) bool {
	words := make(map[key]pools.FeedWord, len(ws))
	expires := make([]time.Time, 0, len(ws))
	for _, w := range ws {
		words[key{w.Pool, w.Origin, w.Monitor}] = w
		expires = append(expires, w.Expires)
	}
	slices.SortFunc(expires, time.Time.Compare)
	t.mu.Lock()
	defer t.mu.Unlock()
	same := t.ready && len(words) == len(t.words)
	for k, w := range words {
		if !same {
			break
		}
		old, ok := t.words[k]
		same = ok && old.Same(&w) && old.At.Equal(w.At) && old.Expires.Equal(w.Expires)
	}
	t.ready = true
	if same {
		return false
	}
	t.words, t.expires = words, expires
	t.gen++
	return true
}

// Ready reports that the words were read at least once.
func (t *Table) Ready() bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.ready
}

// Gen counts the changes Replace made: a reader that computed something
// from the words at one Gen may keep it while Gen stays.
func (t *Table) Gen() uint64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.gen
}

// Word is the latest word of origin k under monitor, live or not.
func (t *Table) Word(k pools.OriginKey, monitor string) (pools.FeedWord, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	w, ok := t.words[key{k.Pool, k.Origin, monitor}]
	return w, ok
}

// Words returns the words of one pool (every pool when pool is empty),
// in no particular order.
func (t *Table) Words(pool string) []pools.FeedWord {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []pools.FeedWord
	for k, w := range t.words {
		if pool == "" || k.pool == pool {
			out = append(out, w)
		}
	}
	return out
}

// NextExpiry is the earliest expiry of a word after now; zero when none
// expires later.
func (t *Table) NextExpiry(now time.Time) time.Time {
	t.mu.RLock()
	defer t.mu.RUnlock()
	i, _ := slices.BinarySearchFunc(t.expires, now, func(e, now time.Time) int {
		if e.After(now) {
			return 1
		}
		return -1
	})
	if i == len(t.expires) {
		return time.Time{}
	}
	return t.expires[i]
}

// Loads is the load of every origin that reports one at now, by pool id
// and origin name: the highest of its live words that carry a load,
// counting only the words of feed monitors that decide in its pool's
// group (a monitoring_only feed is only shown), of enabled origins that
// cfg has. until is when the result may change by the clock alone (a
// word with a load expiring); zero: not by the clock.
func (t *Table) Loads(cfg *pools.Config, now time.Time) (load map[string]map[string]float64, until time.Time) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if len(t.words) == 0 || cfg == nil {
		return nil, time.Time{}
	}
	type member struct{ pool, monitor string }
	deciding := map[member]bool{}
	origins := map[pools.OriginKey]bool{}
	for w := range t.loaded() {
		deciding[member{w.Pool, w.Monitor}] = false
	}
	if len(deciding) == 0 {
		return nil, time.Time{}
	}
	for i := range cfg.Pools {
		p := &cfg.Pools[i]
		decides := false
		for _, g := range p.Group() {
			m := member{p.ID, g.Monitor}
			if _, ok := deciding[m]; ok && !g.MonitoringOnly {
				deciding[m], decides = true, true
			}
		}
		if decides && p.Enabled {
			for _, o := range p.Origins {
				if o.Enabled {
					origins[pools.OriginKey{Pool: p.ID, Origin: o.Name}] = true
				}
			}
		}
	}
	for w := range t.loaded() {
		if !deciding[member{w.Pool, w.Monitor}] || !origins[w.Key()] {
			continue
		}
		if !w.Live(now) {
			continue
		}
		if until.IsZero() || w.Expires.Before(until) {
			until = w.Expires
		}
		if load == nil {
			load = map[string]map[string]float64{}
		}
		if load[w.Pool] == nil {
			load[w.Pool] = map[string]float64{}
		}
		if l, ok := load[w.Pool][w.Origin]; !ok || *w.Load > l {
			load[w.Pool][w.Origin] = *w.Load
		}
	}
	return load, until
}

// loaded yields the words that carry a load; t.mu is held.
func (t *Table) loaded() func(func(*pools.FeedWord) bool) {
	return func(yield func(*pools.FeedWord) bool) {
		for _, w := range t.words {
			if w.Load != nil && !yield(&w) {
				return
			}
		}
	}
}
