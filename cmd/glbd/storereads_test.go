package main

import "testing"

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
