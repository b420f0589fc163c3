package analytics

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/pools"
)

// BucketSeconds is the width of a count's time bucket.
const BucketSeconds = 10

// Grace is how long after a bucket ends it is drained: long enough for a
// query that read the clock in the bucket to have counted.
const Grace = 5 * time.Second

// tables is how many buckets are held: the one being counted, the one
// waiting out its grace, and two to spare for a drain that runs late.
const tables = 4

// maxProbe bounds the cells a count looks at before it gives up on its
// place (and then on counting): a full table costs a bounded scan.
const maxProbe = 32

// DefaultCells is the cells per bucket when Counts is made with 0: 4 MiB
// in all (tables × cells × 16 bytes).
const DefaultCells = 1 << 16

// Counts is the answer counts of one node: a fixed table of cells per
// bucket, the bucket's index (its start in Unix seconds / BucketSeconds)
// modulo tables choosing the table. Add is safe for any number of
// goroutines; Drain and Register are the flush loop's and Publish's.
type Counts struct {
	t    [tables][]cell
	mask uint64

	// placeless counts answers kept without their region and country
	// because the table had no cell left for them; lost those not counted
	// at all (Prometheus exports both, unlabelled).
	placeless, lost atomic.Uint64

	mu     sync.Mutex
	epoch  uint16
	namers [Epochs]epochNamer
}

type cell struct {
	key atomic.Uint64
	n   atomic.Uint64
}

type epochNamer struct {
	n Namer
	// until is when the next epoch replaced it (zero while current).
	until time.Time
}

// Namer names a cell's load balancer, pool and origin in the snapshot of
// its epoch: ids for the load balancer and the pool, the origin's name.
// Counts keeps a namer until the last bucket its epoch counted in is
// drained, up to a bucket and its Grace after the next one replaced it,
// and one for every snapshot published meanwhile: a namer holds the names
// alone, never the snapshot they came from.
type Namer interface {
	CellNames(lb uint32, pool, origin uint8) (lbID, poolID, originName string, ok bool)
}

// NewCounts makes the tables with cells per bucket (rounded up to a power
// of two; 0: DefaultCells).
func NewCounts(cells int) *Counts {
	if cells <= 0 {
		cells = DefaultCells
	}
	n := 1
	for n < cells {
		n <<= 1
	}
	c := &Counts{mask: uint64(n - 1)}
	for i := range c.t {
		c.t[i] = make([]cell, n)
	}
	return c
}

// Bytes is the tables' memory: the bound of the counts.
func (c *Counts) Bytes() int { return tables * len(c.t[0]) * 16 }

// Bucket is the bucket of a time.
func Bucket(t time.Time) int64 { return t.Unix() / BucketSeconds }

// BucketStart is when bucket b begins.
func BucketStart(b int64) time.Time { return time.Unix(b*BucketSeconds, 0).UTC() }

// Add counts one answer of the cell key (Key with WithRcode) at now. A
// table with no cell left for the key counts it without its region and
// country, and failing that not at all. It takes no lock and allocates
// nothing.
func (c *Counts) Add(now time.Time, key uint64) {
	if key == 0 {
		return
	}
	t := c.t[Bucket(now)%tables]
	if c.add(t, key) {
		return
	}
	if key&placeMask != 0 && c.add(t, key&^placeMask) {
		c.placeless.Add(1)
		return
	}
	c.lost.Add(1)
}

func (c *Counts) add(t []cell, key uint64) bool {
	h := (key * 0x9e3779b97f4a7c15) >> 20
	for i := range uint64(maxProbe) {
		e := &t[(h+i)&c.mask]
		k := e.key.Load()
		if k == 0 {
			if e.key.CompareAndSwap(0, key) {
				e.n.Add(1)
				return true
			}
			k = e.key.Load() // another goroutine claimed it: perhaps for this key
		}
		if k == key {
			e.n.Add(1)
			return true
		}
	}
	return false
}

// Placeless and Lost are the answers counted without their place, and
// not counted, because a bucket's table was full.
// A nil *Counts has counted nothing.
func (c *Counts) Placeless() uint64 {
	if c == nil {
		return 0
	}
	return c.placeless.Load()
}

func (c *Counts) Lost() uint64 {
	if c == nil {
		return 0
	}
	return c.lost.Load()
}

// Register makes n the names new counts are named by and returns its
// epoch for Key. Registering the namer already current returns its epoch:
// several servers publish the same snapshot, and a snapshot whose names
// did not change may bring the same namer.
func (c *Counts) Register(n Namer, now time.Time) uint16 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur := &c.namers[c.epoch]; cur.n == n {
		return c.epoch
	} else if cur.n != nil {
		cur.until = now
	}
	c.epoch = (c.epoch + 1) % Epochs
	c.namers[c.epoch] = epochNamer{n: n}
	return c.epoch
}

// Drain takes the counts of bucket b out of its table, named, one row per
// cell name (cells of several epochs naming the same load balancer, pool
// and origin are summed), and forgets the namers no later bucket can
// count in. Call it once per bucket, at least Grace after the bucket
// ended and before the bucket tables later reuses its table.
func (c *Counts) Drain(b int64) []pools.AnswerCount {
	t := c.t[b%tables]
	type name struct {
		lb, pool, origin string
		region, country  uint8
		rcode            uint8
	}
	sums := map[name]int64{}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range t {
		e := &t[i]
		k := e.key.Load()
		if k == 0 {
			continue
		}
		n := e.n.Swap(0)
		e.key.Store(0)
		cl := Unpack(k)
		en := c.namers[cl.Epoch]
		if n == 0 || en.n == nil {
			continue
		}
		lb, pool, origin, ok := en.n.CellNames(cl.LB, cl.Pool, cl.Origin)
		if !ok {
			continue
		}
		sums[name{lb, pool, origin, cl.Region, cl.Country, cl.Rcode}] += int64(n)
	}
	// An epoch replaced before this bucket ended counts in no later one.
	end := BucketStart(b + 1)
	for i := range c.namers {
		if en := &c.namers[i]; en.n != nil && !en.until.IsZero() && en.until.Before(end) {
			*en = epochNamer{}
		}
	}
	start := BucketStart(b)
	out := make([]pools.AnswerCount, 0, len(sums))
	for k, n := range sums {
		out = append(out, pools.AnswerCount{Bucket: start, Step: BucketSeconds, LoadBalancer: k.lb, Pool: k.pool, Origin: k.origin,
			Region: RegionName(k.region), Country: CountryName(k.country), Rcode: RcodeName(k.rcode), Answers: n})
	}
	return out
}

// RcodeName is the mnemonic of a response code.
func RcodeName(rc uint8) string {
	if s, ok := dns.RcodeToString[int(rc)]; ok {
		return s
	}
	return "RCODE" + string(rune('0'+rc/10)) + string(rune('0'+rc%10))
}
