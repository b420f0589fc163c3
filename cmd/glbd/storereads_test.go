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

// Health is read on a notification at once, unless a read started less
// than healthGap ago: then the next tick reads it, once for all the news
// meanwhile; without news, a tick reads once a healthPoll.
func TestHealthPace(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	var p healthPace
	if !p.notified(t0) {
		t.Fatal("the first notification was held back")
	}
	p.reading(t0)
	if p.notified(t0.Add(healthGap / 2)) {
		t.Error("a notification within healthGap of a read was read at once")
	}
	if p.notified(t0.Add(healthGap * 3 / 4)) {
		t.Error("a second notification within healthGap was read at once")
	}
	if !p.tick(t0.Add(healthGap)) {
		t.Fatal("the tick after held-back news did not read")
	}
	p.reading(t0.Add(healthGap))
	for at := 2 * healthGap; at < healthGap+healthPoll; at += healthGap {
		if p.tick(t0.Add(at)) {
			t.Fatalf("a tick without news read %v after the last read", at-healthGap)
		}
	}
	if !p.tick(t0.Add(healthGap + healthPoll)) {
		t.Error("no read a healthPoll after the last one")
	}
	if !p.notified(t0.Add(3 * healthGap)) {
		t.Error("a notification healthGap after the last read was held back")
	}
}
