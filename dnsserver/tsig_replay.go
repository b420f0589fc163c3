package dnsserver

import (
	"sync"
	"time"
)

// replayCache keeps the answer to every signed UPDATE this node took
// while its time is within its fudge, by key and MAC. A message seen
// again within that time is a retransmission (nsupdate resends a UDP
// UPDATE after 3 s without an answer) or a replay (RFC 8945 §5.2.3 and
// §10: a MAC checks out as long as the time does, so only memory tells
// one): either way it gets the answer the first got, once that is known,
// and changes nothing again. A client that resent because the first
// answer was slow so learns what became of its update; someone replaying
// a captured message learns what the wire already told them. Every
// message whose MAC checked out is kept, whether it was applied or
// refused: a refused update replayed later, when its prerequisites hold,
// does not go through either. Only verified messages enter, so only a
// key's holder can grow it; it is off the answer path, so it may lock.
//
// It is per node: a message captured on its way to one node and sent to
// another is caught only by the zone's state (a replayed add or delete
// changes nothing a second time) or not at all. glb keeps no last Time
// Signed per key either (the RFC's SHOULD): clients on several machines
// share a key, and their clocks differ by more than a second.
type replayCache struct {
	mu   sync.Mutex
	seen map[replayKey]*replayEntry
	// prune is the size at which expired entries are swept next.
	prune int
}

type replayKey struct{ key, mac string }

// replayEntry is the answer to one message: reply is set when done closes.
type replayEntry struct {
	until int64 // unix second after which the message is BADTIME anyway
	done  chan struct{}
	reply []byte
}

const replayPruneMin = 1024

// claim returns the entry of key's message with mac, and whether this
// call made it: the caller then answers the message and calls finish.
// The entry is kept until until (unix seconds: the message's Time Signed
// plus its fudge).
func (c *replayCache) claim(key, mac string, until int64, now time.Time) (*replayEntry, bool) {
	k := replayKey{key, mac}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen, c.prune = map[replayKey]*replayEntry{}, replayPruneMin
	}
	t := now.Unix()
	if e, ok := c.seen[k]; ok && e.until >= t {
		return e, false
	}
	if len(c.seen) >= c.prune {
		for k, e := range c.seen {
			if e.until < t && e.finished() {
				delete(c.seen, k)
			}
		}
		c.prune = max(replayPruneMin, 2*len(c.seen))
	}
	e := &replayEntry{until: until, done: make(chan struct{})}
	c.seen[k] = e
	return e, true
}

// finish records the answer (copied) and lets those waiting for it go.
func (e *replayEntry) finish(reply []byte) {
	e.reply = append([]byte(nil), reply...)
	close(e.done)
}

func (e *replayEntry) finished() bool {
	select {
	case <-e.done:
		return true
	default:
		return false
	}
}
