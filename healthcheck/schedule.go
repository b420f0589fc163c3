package healthcheck

import (
	"container/heap"
	"context"
	"math"
	"sync/atomic"
	"time"
)

// The scheduler. One goroutine keeps every pair in a queue ordered by the
// time of its next check and starts each due check on a goroutine, up to
// the bound on checks in flight. Goroutines and sockets follow the checks
// in flight, whatever the number of origins.
//
// Each pair has a fixed phase, and its checks fall on slots one interval
// apart at that phase, so checks keep their place in the interval and the
// rate is the configured one: 100,000 origins every 60 s are 1,667 checks
// every second, not a burst each minute. A check that runs past its next
// slot (a timeout as long as the interval or longer, or no room in
// flight) does not queue another beside it: the pair has at most one
// check queued or in flight. Its next check runs as soon as it ends, in
// place of the slot it ran into, and any further slots it ran over are
// counted in glb_healthcheck_missed_checks_total.

const (
	// golden is the fractional part of the golden ratio. The phases
	// k × golden mod 1 of pairs k = 1, 2, ... are as evenly spread as any
	// sequence can be for every count of pairs (the three-gap theorem),
	// so an interval's checks fill it evenly however many origins there
	// are and however they came and went; a new pair never moves the
	// others.
	golden = 0.6180339887498949
	// minInFlight and maxInFlight bound the derived limit on checks in
	// flight (Options.MaxConcurrent). Below 64 a few slow origins would
	// hold up the rest; 4096 sockets and goroutines are well within a
	// server's means and keep 800 checks a second while every one of
	// them times out after 5 s.
	minInFlight = 64
	maxInFlight = 4096
)

// sched is the part of the Checker the scheduler and the checks share
// without c.mu.
type sched struct {
	epoch    time.Time     // slots count from here (monotonic clock)
	seq      uint64        // phases handed out; guarded by c.mu
	wake     chan struct{} // a pair was queued before the scheduler's wake-up
	freed    chan struct{} // a check ended
	inFlight atomic.Int64  // checks running, each on its goroutine
	limit    atomic.Int64  // bound on inFlight
}

func newSched() sched {
	return sched{epoch: time.Now(), wake: make(chan struct{}, 1), freed: make(chan struct{}, 1)}
}

// nextPhase is the phase of a new pair; c.mu is held.
func (c *Checker) nextPhase() float64 {
	c.seq++
	_, f := math.Modf(float64(c.seq) * golden)
	return f
}

// setLimit sets the bound on checks in flight: the option, else busy (the
// checks in flight when every check takes its whole budget) within
// [minInFlight, maxInFlight]. A lowered bound holds back new checks
// until those in flight fall below it.
func (c *Checker) setLimit(busy float64) {
	n := c.opts.MaxConcurrent
	if n <= 0 {
		n = min(max(int(math.Ceil(busy)), minInFlight), maxInFlight)
	}
	c.limit.Store(int64(n))
	c.m.limit.Set(float64(n))
	signal(c.freed) // a scheduler waiting for room sees a raised bound at once
}

// slot is the index of p's latest slot at or before t.
func (c *Checker) slot(p *pair, t time.Time) int64 {
	iv := p.t.interval
	d := t.Sub(c.epoch) - time.Duration(p.phase*float64(iv))
	k := d / iv
	if d < 0 && d%iv != 0 {
		k--
	}
	return int64(k)
}

// slotTime is the time of p's slot k.
func (c *Checker) slotTime(p *pair, k int64) time.Time {
	iv := p.t.interval
	return c.epoch.Add(time.Duration(p.phase*float64(iv)) + time.Duration(k)*iv)
}

// slotAfter is p's first slot after t.
func (c *Checker) slotAfter(p *pair, t time.Time) time.Time {
	return c.slotTime(p, c.slot(p, t)+1)
}

// plan queues the first checks of new pairs; c.mu is held. A few (an
// edited pool) are checked at once. A batch larger than the checks
// allowed in flight (a node starting on a large estate, a monitor given
// to thousands of origins) waits for its slots instead, spread over the
// interval, rather than queue behind the limit in one burst.
func (c *Checker) plan(fresh []*pair, now time.Time) {
	atOnce := int64(len(fresh)) <= c.limit.Load()
	for _, p := range fresh {
		if p.isFeed() {
			continue // feedLoop's
		}
		if atOnce {
			c.queue.push(p, now)
		} else {
			c.queue.push(p, c.slotAfter(p, now))
		}
		if p.index == 0 {
			signal(c.wake)
		}
	}
}

// next is when p is checked again after the check due at due ended at
// end, and how many of its slots that check ran over. The next slot is
// at least half an interval after due, so that a check run at once (a new
// pair) is not followed by its first slot a moment later. A check that
// ran past that slot runs again at once, late, rather than wait for the
// slot after its end: a check that times out with a timeout equal to its
// interval ends a hair after its next slot, and skipping that slot made
// every failing check of such a monitor cost two intervals, so that an
// unreachable origin left the answers after twice the time its
// thresholds promise. Only the slots beyond the one run late are missed.
func (c *Checker) next(p *pair, due, end time.Time) (time.Time, int64) {
	half := due.Add(p.t.interval / 2)
	first := c.slot(p, half) + 1
	if !end.After(c.slotTime(p, first)) {
		return c.slotTime(p, first), 0
	}
	return end, c.slot(p, end) - first
}

// schedule starts the checks of due pairs until ctx ends.
func (c *Checker) schedule(ctx context.Context) {
	defer c.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		c.mu.Lock()
		p, wait := c.queue.popDue(time.Now())
		c.mu.Unlock()
		if p != nil {
			if !c.dispatch(ctx, p) {
				return
			}
			continue
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		case <-timer.C:
		}
	}
}

// dispatch starts p's check on a goroutine of its own once fewer checks
// than the limit are in flight; false when ctx ended first. A goroutine
// per check rather than a pool of workers: the goroutines are exactly the
// checks in flight, none idles, and none outlives a burst.
func (c *Checker) dispatch(ctx context.Context, p *pair) bool {
	// Only this goroutine adds checks, so their number cannot pass the
	// limit between the test and the add.
	for c.inFlight.Load() >= c.limit.Load() {
		select {
		case <-c.freed:
		case <-ctx.Done():
			return false
		}
	}
	c.inFlight.Add(1)
	c.m.inFlight.Inc()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.run(ctx, p)
		c.inFlight.Add(-1)
		c.m.inFlight.Dec()
		signal(c.freed)
	}()
	return true
}

// run checks p once, records the result and queues its next check.
func (c *Checker) run(ctx context.Context, p *pair) {
	c.mu.Lock()
	if p.removed {
		c.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	p.cancel, p.done = cancel, make(chan struct{})
	due := p.due
	c.mu.Unlock()

	start := time.Now()
	r := check(ctx, p.prober, p.t.retries)
	end := time.Now()
	stopped := ctx.Err() != nil // removed, or the Checker stopping
	cancel()
	if !stopped {
		c.record(p, r, end.Sub(start))
	}

	c.mu.Lock()
	close(p.done)
	p.cancel, p.done = nil, nil
	if !stopped && !p.removed {
		next, missed := c.next(p, due, end)
		c.queue.push(p, next)
		if p.index == 0 {
			signal(c.wake)
		}
		if missed > 0 {
			c.m.missed.WithLabelValues(p.t.pool).Add(float64(missed))
		}
	}
	c.mu.Unlock()
}

// queue is a min-heap of pairs by due time; c.mu guards it.
type queue []*pair

func (q queue) Len() int           { return len(q) }
func (q queue) Less(i, j int) bool { return q[i].due.Before(q[j].due) }
func (q queue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *queue) Push(x any) {
	p := x.(*pair)
	p.index = len(*q)
	*q = append(*q, p)
}
func (q *queue) Pop() any {
	old := *q
	p := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	p.index = -1
	return p
}

// push queues p, due at due.
func (q *queue) push(p *pair, due time.Time) {
	p.due = due
	heap.Push(q, p)
}

// remove takes p out of the queue when it is in it.
func (q *queue) remove(p *pair) {
	if p.index >= 0 {
		heap.Remove(q, p.index)
	}
}

// popDue pops the earliest pair when it is due at now; otherwise it says
// how long until the earliest is due.
func (q *queue) popDue(now time.Time) (*pair, time.Duration) {
	if len(*q) == 0 {
		return nil, time.Hour
	}
	if wait := (*q)[0].due.Sub(now); wait > 0 {
		return nil, wait
	}
	return heap.Pop(q).(*pair), 0
}

// clear empties the queue (the Checker stopped).
func (q *queue) clear() {
	for _, p := range *q {
		p.index = -1
	}
	*q = nil
}
