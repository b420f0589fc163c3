package rum

import (
	"errors"
	"net/netip"
	"sync"
	"time"

	"github.com/glb-dns/glb/pools"
)

// Measurement is one pool's time in a report.
type Measurement struct {
	Pool string
	Ms   float64
}

// ErrRateLimited: the client network sent more reports than its rate.
var ErrRateLimited = errors.New("rum: client network over its report rate")

// Limits of the collector.
const (
	// maxNetworks bounds the rate limiter's table: past it, a network not
	// yet in it is refused until the idle ones are swept.
	maxNetworks = 100_000
	// maxCells bounds the histograms held between writes to the store.
	maxCells = 200_000
)

// Collector keeps a node's reports until they are written to the store:
// one histogram per (minute, client network, pool), and the client
// network of each report's token. A token bucket per client network
// bounds how much one network can put in: a flood from one network
// fills its own histograms, never another's. Safe for concurrent use
// (reports arrive on HTTP goroutines, never on the DNS path).
type Collector struct {
	// Rate is the reports a network may send per minute, Burst how many
	// at once.
	rate, burst float64
	now         func() time.Time

	mu      sync.Mutex
	limits  map[netip.Prefix]*bucket
	cells   map[cellKey]*[pools.RUMHistogramBuckets]int32
	tokens  []pools.RUMToken
	swept   time.Time
	refused uint64
}

type bucket struct {
	tokens float64
	at     time.Time
}

type cellKey struct {
	minute  int64
	network netip.Prefix
	pool    string
}

// NewCollector makes a collector allowing perMinute reports a minute per
// client network (bursts of up to perMinute/3, at least 5); now nil is
// time.Now.
func NewCollector(perMinute float64, now func() time.Time) *Collector {
	if now == nil {
		now = time.Now
	}
	return &Collector{rate: perMinute / 60, burst: max(5, perMinute/3), now: now,
		limits: map[netip.Prefix]*bucket{}, cells: map[cellKey]*[pools.RUMHistogramBuckets]int32{}}
}

// Add takes one report of the client network (already cut by Network)
// with its beacon's token ("" for none). The caller has checked the
// values (Check).
func (c *Collector) Add(network netip.Prefix, token string, ms []Measurement) error {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.allow(network, now) {
		c.refused++
		return ErrRateLimited
	}
	minute := pools.MinuteOf(now).Unix()
	for _, m := range ms {
		k := cellKey{minute, network, m.Pool}
		h := c.cells[k]
		if h == nil {
			if len(c.cells) >= maxCells {
				continue
			}
			h = new([pools.RUMHistogramBuckets]int32)
			c.cells[k] = h
		}
		h[bucketOf(m.Ms)]++
	}
	if token != "" && len(c.tokens) < maxCells {
		c.tokens = append(c.tokens, pools.RUMToken{Token: token, Network: network, Seen: now})
	}
	return nil
}

// allow takes a token from network's bucket.
func (c *Collector) allow(network netip.Prefix, now time.Time) bool {
	if now.Sub(c.swept) > time.Minute {
		// A bucket idle long enough to have refilled is a full new one.
		full := time.Duration(c.burst / c.rate * float64(time.Second))
		for k, b := range c.limits {
			if now.Sub(b.at) > full {
				delete(c.limits, k)
			}
		}
		c.swept = now
	}
	b := c.limits[network]
	if b == nil {
		if len(c.limits) >= maxNetworks {
			return false
		}
		b = &bucket{tokens: c.burst, at: now}
		c.limits[network] = b
	}
	b.tokens = min(c.burst, b.tokens+now.Sub(b.at).Seconds()*c.rate)
	b.at = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// Rows returns every histogram held, for the store; the current
// minute's is written again (replacing its row) until it is over.
func (c *Collector) Rows() []pools.RUMSamples {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]pools.RUMSamples, 0, len(c.cells))
	for k, h := range c.cells {
		out = append(out, pools.RUMSamples{Minute: time.Unix(k.minute, 0).UTC(), Network: k.network, Pool: k.pool, Counts: append([]int32(nil), h[:]...)})
	}
	return out
}

// Written forgets the histograms of minutes before the current one
// (the store has them) and hands over the tokens seen since the last
// call.
func (c *Collector) Written() {
	cur := pools.MinuteOf(c.now()).Unix()
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.cells {
		if k.minute < cur {
			delete(c.cells, k)
		}
	}
}

// Tokens returns and forgets the reports' tokens since the last call.
func (c *Collector) Tokens() []pools.RUMToken {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.tokens
	c.tokens = nil
	return t
}

// Refused is how many reports the rate limit refused.
func (c *Collector) Refused() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refused
}
