package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/pools/postgres"
)

// originsPerPool splits a node's origins into pools.
const originsPerPool = 100

// minPublishGap is healthcheck's: a publication prompted by a change
// waits this long after the last one.
const minPublishGap = 200 * time.Millisecond

func originKey(i int) pools.OriginKey {
	return pools.OriginKey{Pool: fmt.Sprintf("pool-%04d", i/originsPerPool), Origin: fmt.Sprintf("o%03d", i%originsPerPool)}
}

// flipKey is the origin every node's checks see flip.
var flipKey = originKey(0)

// simNode is one glbd node as the store sees it.
type simNode struct {
	name  string
	p     params
	store *postgres.Store
	fleet *fleet

	// The checker: the states of its origins, and which changed since
	// the last publication (the Follower's news).
	mu      sync.Mutex
	healthy []bool
	rtt     []time.Duration
	news    map[int]bool
	full    bool
	kick    chan struct{}

	// The follower: cursors and the flip origin's state in each node's
	// view as this node knows it (own: straight from its checker).
	cursors map[string]pools.HealthCursor
	seen    map[string]bool
}

func newSimNode(ctx context.Context, url, name string, p params, f *fleet) (*simNode, error) {
	s, err := postgres.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	n := &simNode{name: name, p: p, store: s, fleet: f, healthy: make([]bool, p.origins), rtt: make([]time.Duration, p.origins),
		news: map[int]bool{}, full: true, kick: make(chan struct{}, 1), cursors: map[string]pools.HealthCursor{}, seen: map[string]bool{}}
	for i := range n.healthy {
		n.healthy[i], n.rtt[i] = true, time.Duration(10+rand.IntN(90))*time.Millisecond
	}
	return n, nil
}

func (n *simNode) run(ctx context.Context, wg *sync.WaitGroup) {
	wg.Add(4)
	go func() { defer wg.Done(); n.publishLoop(ctx) }()
	go func() { defer wg.Done(); n.followLoop(ctx) }()
	go func() { defer wg.Done(); n.reportLoop(ctx) }()
	go func() { defer wg.Done(); n.countLoop(ctx) }()
}

// check is this node's check of the flip origin seeing it as healthy:
// at its next check, some time within the interval (checks are spread).
func (n *simNode) check(ctx context.Context, healthy bool, flip int) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(rand.N(n.p.interval)):
	}
	n.mu.Lock()
	i := 0 // flipKey
	n.healthy[i], n.news[i] = healthy, true
	n.mu.Unlock()
	n.fleet.saw(n.name, n.name, healthy, flip) // our own view, at once
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

func (n *simNode) publishLoop(ctx context.Context) {
	timer := time.NewTimer(0)
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-n.kick:
			if wait := minPublishGap - time.Since(last); wait > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
			}
		}
		last = time.Now()
		n.publish(ctx)
		timer.Reset(n.p.interval)
	}
}

func (n *simNode) publish(ctx context.Context) {
	n.mu.Lock()
	// RTTs that moved since the last cadence.
	for range int(n.p.rttChurn * float64(n.p.origins)) {
		i := rand.IntN(n.p.origins)
		n.rtt[i] += time.Duration(rand.IntN(20)+5) * time.Millisecond / 2
		n.news[i] = true
	}
	u := pools.HealthUpdate{Node: n.name, Region: "WEU", Published: time.Now(), Full: n.full}
	add := func(i int) {
		k := originKey(i)
		u.Origins = append(u.Origins, pools.OriginState{Pool: k.Pool, Origin: k.Origin, Healthy: n.healthy[i], RTT: n.rtt[i]})
	}
	if n.full {
		for i := range n.healthy {
			add(i)
		}
	} else {
		for i := range n.news {
			add(i)
		}
	}
	news := n.news
	n.news = map[int]bool{}
	n.mu.Unlock()
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err := n.store.PublishHealth(pctx, u)
	cancel()
	n.mu.Lock()
	defer n.mu.Unlock()
	if err != nil {
		n.fleet.errorf("publish %s: %v", n.name, err)
		for i := range news { // sent again with the next
			n.news[i] = true
		}
		return
	}
	n.full = false
}

// healthGap is glbd's (cmd/glbd/storereads.go): a notification within
// it of the last read waits for the rest of it.
const healthGap = time.Second

// followLoop reads the others' health as glbd does, one read at a time:
// on a notification at once unless one started less than healthGap ago,
// then when the gap ends; without news at the one-second tick nearest to
// half the cadence (at least every second). And the revision every 2 s.
func (n *simNode) followLoop(ctx context.Context) {
	changes := n.store.Watch(ctx)
	want := make(chan struct{}, 1)
	var askedAt time.Time
	news := false
	ask := func() {
		askedAt, news = time.Now(), false
		select {
		case want <- struct{}{}:
		default:
		}
	}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-want:
				n.readHealth(ctx)
			}
		}
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	held := time.NewTimer(time.Hour)
	held.Stop()
	defer held.Stop()
	poll := time.NewTicker(2 * time.Second)
	defer poll.Stop()
	ask()
	for {
		select {
		case <-ctx.Done():
			return
		case ch, ok := <-changes:
			if !ok {
				return
			}
			if ch.Health {
				if wait := healthGap - time.Since(askedAt); wait > 0 {
					news = true
					held.Reset(wait)
				} else {
					ask()
				}
			}
		case <-held.C:
			if news {
				ask()
			}
		case <-tick.C:
			quiet := max(healthGap, n.p.interval/2)
			if since := time.Since(askedAt); news && since >= healthGap || since >= quiet-healthGap/2 {
				ask()
			}
		case <-poll.C:
			rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			if _, err := n.store.Revision(rctx); err != nil && ctx.Err() == nil {
				n.fleet.errorf("revision %s: %v", n.name, err)
			}
			cancel()
		}
	}
}

func (n *simNode) readHealth(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, time.Minute) // the first read is everyone's whole view
	ups, err := n.store.HealthSince(rctx, n.cursors)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			n.fleet.errorf("health since %s: %v", n.name, err)
		}
		return
	}
	for _, u := range ups {
		n.cursors[u.Node] = u.Cursor
		if u.Node == n.name {
			continue // our own comes from the checker
		}
		if u.Full {
			delete(n.seen, u.Node)
		}
		for _, o := range u.Origins {
			if o.Key() == flipKey {
				n.seen[u.Node] = o.Healthy
				n.fleet.saw(n.name, u.Node, o.Healthy, -1)
			}
		}
		for _, k := range u.Removed {
			if k == flipKey {
				delete(n.seen, u.Node)
			}
		}
	}
	n.fleet.caughtUp(n.name, len(ups))
}

// reportLoop reports the node's status every second and reads the
// fleet's every other, as glbd does (cmd/glbd/fleet.go).
func (n *simNode) reportLoop(ctx context.Context) {
	started := time.Now()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for i := 0; ; i++ {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := n.store.ReportNode(rctx, pools.NodeStatus{Name: n.name, Region: "WEU", Version: "bench", StartedAt: started,
			SnapshotAt: time.Now(), Store: true, Checks: pools.NodeChecks{Origins: n.p.origins}})
		if err == nil && i%2 == 0 {
			_, err = n.store.Nodes(rctx)
		}
		cancel()
		if err != nil && ctx.Err() == nil {
			n.fleet.errorf("report %s: %v", n.name, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// countLoop writes the answer counts of each 10-second bucket.
func (n *simNode) countLoop(ctx context.Context) {
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			bucket := now.Truncate(10 * time.Second).Add(-10 * time.Second)
			rows := make([]pools.AnswerCount, n.p.countRows)
			for i := range rows {
				k := originKey(i % n.p.origins)
				rows[i] = pools.AnswerCount{Bucket: bucket, Step: pools.AnswerStepFine, LoadBalancer: "lb-" + k.Pool,
					Pool: k.Pool, Origin: k.Origin, Region: "WEU", Country: "DE", Rcode: "NOERROR", Answers: int64(100 + i)}
			}
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			if err := n.store.AddAnswerCounts(wctx, n.name, rows); err != nil && ctx.Err() == nil {
				n.fleet.errorf("answer counts %s: %v", n.name, err)
			}
			cancel()
		}
	}
}
