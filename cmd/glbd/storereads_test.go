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
// Without news, health is read at the one-second tick nearest to the
// quiet time, half the publication cadence: with a 10 s cadence, every
// 5 s; with one of 2 s (the lab's), every second.
func TestHealthPace(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	quiet := quietRead(10 * time.Second)
	if quiet != 5*time.Second || quietRead(2*time.Second) != healthGap || quietRead(500*time.Millisecond) != healthGap {
		t.Fatalf("quiet reads %v, %v, %v for cadences 10 s, 2 s, 0.5 s; want 5 s, 1 s, 1 s",
			quiet, quietRead(2*time.Second), quietRead(500*time.Millisecond))
	}
	var p healthPace
	if w := p.notified(t0); w != 0 {
		t.Fatalf("the first notification was held back %v", w)
	}
	p.reading(t0)
	if w := p.notified(t0.Add(healthGap / 4)); w != healthGap*3/4 {
		t.Errorf("a notification a quarter gap after a read: held %v, want the rest of the gap, %v", w, healthGap*3/4)
	}
	if w := p.notified(t0.Add(healthGap / 2)); w != healthGap/2 {
		t.Errorf("a second notification half a gap after a read: held %v, want %v", w, healthGap/2)
	}
	if p.due(t0.Add(healthGap-time.Millisecond), quiet) {
		t.Error("held-back news read before its gap ended")
	}
	if !p.due(t0.Add(healthGap), quiet) {
		t.Fatal("held-back news not due when the gap ended")
	}
	p.reading(t0.Add(healthGap))
	// The ticks after a read, each a little late as a timer is: none
	// due before the quiet time's, that one due.
	for at := 2 * healthGap; at < healthGap+quiet; at += healthGap {
		if p.due(t0.Add(at-time.Millisecond), quiet) {
			t.Fatalf("without news a read was due %v after the last one (quiet %v)", at-healthGap, quiet)
		}
	}
	if !p.due(t0.Add(healthGap+quiet-time.Millisecond), quiet) {
		t.Errorf("no read due at the tick %v after the last one", quiet)
	}
	if w := p.notified(t0.Add(2 * healthGap)); w != 0 {
		t.Errorf("a notification a gap after the last read was held back %v", w)
	}
	// With a quiet time of a second, every tick reads.
	p.reading(t0)
	if !p.due(t0.Add(healthGap-time.Millisecond), quietRead(2*time.Second)) {
		t.Error("a tick a second after a read, a little early, not due with a 2 s cadence")
	}
}
