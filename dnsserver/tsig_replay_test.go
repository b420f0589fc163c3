package dnsserver

import (
	"strconv"
	"testing"
	"time"
)

// TestReplayCache: a MAC is refused while its message could still pass
// the time check, from the same key only, and is forgotten after; the
// map is swept of expired MACs as it grows.
func TestReplayCache(t *testing.T) {
	t.Parallel()
	var c replayCache
	now := time.Unix(1_800_000_000, 0)
	until := now.Unix() + 300
	if !c.first("acme", "aa", until, now) {
		t.Fatal("a new MAC counted as seen")
	}
	if c.first("acme", "aa", until, now.Add(300*time.Second)) {
		t.Fatal("a MAC seen again at the last second of its window went through")
	}
	if !c.first("other", "aa", until, now) {
		t.Fatal("the same MAC under another key counted as seen")
	}
	if !c.first("acme", "aa", until+300, now.Add(301*time.Second)) {
		t.Fatal("a MAC past its window (BADTIME anyway) is still held")
	}
	for i := range 5000 {
		c.first("acme", strconv.Itoa(i), now.Unix()+int64(i%2), now)
	}
	later := now.Add(time.Hour)
	for i := range 5000 {
		c.first("acme", "late"+strconv.Itoa(i), later.Unix()+300, later)
	}
	// The 5,000 MACs of an hour ago went in the sweep at 8,192.
	if n := len(c.seen); n > 6000 {
		t.Fatalf("%d MACs held, expired ones not swept", n)
	}
	if !c.first("acme", "1", later.Unix()+300, later) {
		t.Fatal("an expired MAC came back as seen")
	}
}
