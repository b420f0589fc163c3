package dnsserver

import (
	"sync"
	"time"
)

// replayCache remembers the MAC of every signed UPDATE this node accepted
// while its time is still within its fudge, so that a captured message
// sent again is refused BADTIME (RFC 8945 §5.2.3 and §10: a MAC checks
// out as long as the time does, so only memory tells a replay). Every
// message whose MAC checked out is remembered, whether it was applied or
// refused: a refused update replayed later, when its prerequisites hold,
// must not go through either. Only verified messages enter, so only a
// key's holder can grow it; it is off the answer path, so it may lock.
//
// It is per node: a message captured on its way to one node and sent to
// another is caught only by the zone's state (a replayed add or delete
// changes nothing a second time) or not at all. glb keeps no last Time
// Signed per key either (the RFC's SHOULD): clients on several machines
// share a key, and their clocks differ by more than a second.
type replayCache struct {
	mu   sync.Mutex
	seen map[replayKey]int64 // unix second after which the message is BADTIME anyway
	// prune is the size at which expired entries are swept next.
	prune int
}

type replayKey struct{ key, mac string }

const replayPruneMin = 1024

// first reports whether key's message with mac is seen for the first
// time, and remembers it until until (unix seconds: its Time Signed plus
// its fudge).
func (c *replayCache) first(key, mac string, until int64, now time.Time) bool {
	k := replayKey{key, mac}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen, c.prune = map[replayKey]int64{}, replayPruneMin
	}
	t := now.Unix()
	if u, ok := c.seen[k]; ok && u >= t {
		return false
	}
	if len(c.seen) >= c.prune {
		for k, u := range c.seen {
			if u < t {
				delete(c.seen, k)
			}
		}
		c.prune = max(replayPruneMin, 2*len(c.seen))
	}
	c.seen[k] = until
	return true
}
