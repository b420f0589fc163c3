package main

import (
	"testing"
	"time"
)

// TestBackgroundOneReadAtATime: a read asked for while one is under way
// does not start beside it, and is not forgotten either: ended says
// another is due.
func TestBackgroundOneReadAtATime(t *testing.T) {
	b := newBackground[int]()
	release := make(chan struct{})
	started := 0
	ask := func() {
		b.start(func() func() int {
			started++
			n := started
			return func() int { <-release; return n }
		})
	}
	ask()
	ask() // the first is under way
	if started != 1 {
		t.Fatalf("%d reads started, want 1 while the first is under way", started)
	}
	close(release)
	if got := <-b.done; got != 1 {
		t.Fatalf("result of read %d, want 1", got)
	}
	if !b.ended() {
		t.Fatal("the read asked for while the first was under way was forgotten")
	}
	ask()
	if got := <-b.done; got != 2 || started != 2 {
		t.Fatalf("result of read %d after %d started, want the second", got, started)
	}
	if b.ended() {
		t.Fatal("another read due with none asked for")
	}
}

// A notification is read at once, unless a read started less than
// healthGap ago: then when the gap ends, once for all the news meanwhile.
func TestHealthPace(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	var p healthPace
	if w := p.notified(t0); w != 0 {
		t.Fatalf("the first notification was held back %v", w)
	}
	p.reading(t0)
	if p.due(t0.Add(2 * healthGap)) {
		t.Error("a read due without news")
	}
	if w := p.notified(t0.Add(healthGap / 4)); w != healthGap*3/4 {
		t.Errorf("a notification a quarter gap after a read: held %v, want the rest of the gap, %v", w, healthGap*3/4)
	}
	if w := p.notified(t0.Add(healthGap / 2)); w != healthGap/2 {
		t.Errorf("a second notification half a gap after a read: held %v, want %v", w, healthGap/2)
	}
	if p.due(t0.Add(healthGap - time.Millisecond)) {
		t.Error("held-back news read before its gap ended")
	}
	if !p.due(t0.Add(healthGap)) {
		t.Fatal("held-back news not due when the gap ended")
	}
	p.reading(t0.Add(healthGap))
	if p.due(t0.Add(3 * healthGap)) {
		t.Error("news due again after the read that took it")
	}
	if w := p.notified(t0.Add(2 * healthGap)); w != 0 {
		t.Errorf("a notification a gap after the last read was held back %v", w)
	}
}
