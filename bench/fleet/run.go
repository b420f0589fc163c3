package main

import (
	"context"
	"fmt"
	"log"
	"strings"
	"sync"
	"time"
)

// fleet watches every node's view of the flip origin.
type fleet struct {
	mu sync.Mutex
	n  int
	// view[observer][subject] is the flip origin's state in subject's
	// view as observer knows it.
	view map[string]map[string]bool
	// target is the state every view must reach; agreedBy the observers
	// whose view has all n subjects at it; done closed when all have.
	target   bool
	agreedBy map[string]bool
	done     chan struct{}
	errors   int
	// failed counts the failed calls by what called (the format's first
	// word: publish, health, report, revision, answer).
	failed map[string]int
}

func newFleet(n int) *fleet {
	return &fleet{n: n, view: map[string]map[string]bool{}, target: true, agreedBy: map[string]bool{}, done: make(chan struct{})}
}

// expect sets the state every view must reach and returns the channel
// closed once every node's does.
func (f *fleet) expect(healthy bool) <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.target, f.agreedBy, f.done = healthy, map[string]bool{}, make(chan struct{})
	for obs := range f.view {
		f.check(obs)
	}
	return f.done
}

func (f *fleet) saw(observer, subject string, healthy bool, _ int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v := f.view[observer]
	if v == nil {
		v = map[string]bool{}
		f.view[observer] = v
	}
	v[subject] = healthy
	f.check(observer)
}

func (f *fleet) caughtUp(string, int) {}

// check notes whether observer's view agrees; f.mu is held.
func (f *fleet) check(observer string) {
	if f.agreedBy[observer] {
		return
	}
	v := f.view[observer]
	if len(v) < f.n {
		return
	}
	for _, h := range v {
		if h != f.target {
			return
		}
	}
	f.agreedBy[observer] = true
	if len(f.agreedBy) == f.n {
		close(f.done)
	}
}

// progress says how many observers see how many nodes, and the calls
// failed so far.
func (f *fleet) progress() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	complete, least := 0, f.n
	for _, v := range f.view {
		if len(v) == f.n {
			complete++
		}
		least = min(least, len(v))
	}
	return fmt.Sprintf("%d of %d nodes see every node (the least sees %d); failed calls %v", complete, f.n, least, f.failed)
}

func (f *fleet) errorf(format string, args ...any) {
	f.mu.Lock()
	f.errors++
	if f.failed == nil {
		f.failed = map[string]int{}
	}
	kind := strings.Fields(format)[0]
	f.failed[kind]++
	// The first of each kind is printed: a storm of one kind must not hide
	// why another fails.
	first := f.failed[kind] == 1
	f.mu.Unlock()
	if first {
		log.Printf(format, args...)
	}
}

// run starts p.nodes nodes on the database at url, waits until every view
// has everyone, flips the flip origin p.flips times and measures.
func run(ctx context.Context, url string, p params) (result, error) {
	r := result{p: p, loadBefore: loadAvg()}
	ctx, cancel := context.WithCancel(ctx)
	f := newFleet(p.nodes)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	smp, err := newSampler(ctx, url)
	if err != nil {
		return r, err
	}
	defer smp.close()
	nodes := make([]*simNode, p.nodes)
	start := time.Now()
	warm := f.expect(true)
	for i := range nodes {
		n, err := newSimNode(ctx, url, fmt.Sprintf("node-%02d", i), p, f)
		if err != nil {
			return r, err
		}
		defer n.store.Close()
		nodes[i] = n
		n.run(ctx, &wg)
		f.saw(n.name, n.name, true, -1)
		if p.ramp > 0 && i < len(nodes)-1 {
			time.Sleep(p.ramp / time.Duration(len(nodes)-1))
		}
	}
	progress := time.NewTicker(30 * time.Second)
	defer progress.Stop()
	limit := time.After(p.warmupLimit)
wait:
	select {
	case <-progress.C:
		log.Printf("warming up: %s", f.progress())
		goto wait
	case <-warm:
		r.warmup = time.Since(start)
		log.Printf("%d nodes × %d origins: every view complete after %.1f s", p.nodes, p.origins, r.warmup.Seconds())
	case <-limit:
		// Measured all the same: the load of a fleet that cannot keep up.
		r.warmup = -1
		log.Printf("%d nodes × %d origins: views not complete after %s", p.nodes, p.origins, p.warmupLimit)
	}
	// Let the start's reads and writes settle.
	time.Sleep(2 * p.interval)

	smp.resetStatements(ctx)
	f.mu.Lock()
	failedBefore := f.errors
	f.mu.Unlock()
	before, err := smp.read(ctx)
	if err != nil {
		return r, err
	}
	healthy := true
	for i := range p.flips {
		healthy = !healthy
		agreed := f.expect(healthy)
		t0 := time.Now()
		for _, n := range nodes {
			go n.check(ctx, healthy, i)
		}
		select {
		case <-agreed:
			r.agreement = append(r.agreement, time.Since(t0))
		case <-time.After(3 * p.interval):
			r.missed++
		}
		// Steady state between flips.
		time.Sleep(p.interval)
	}
	after, err := smp.read(ctx)
	if err != nil {
		return r, err
	}
	r.load = rate(before, after)
	f.mu.Lock()
	r.failedMeasured = f.errors - failedBefore
	f.mu.Unlock()
	smp.topStatements(ctx, after.at.Sub(before.at))
	r.loadAfter = loadAvg()
	if f.errors > 0 {
		f.mu.Lock()
		log.Printf("%d store calls failed: %v", f.errors, f.failed)
		f.mu.Unlock()
	}
	return r, nil
}
