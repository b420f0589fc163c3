package dnsserver

import (
	"strconv"
	"testing"
	"time"
)

// first claims (key, mac) and finishes it at once, as a message answered
// at once would; it reports whether the message was new.
func (c *replayCache) first(key, mac string, until int64, now time.Time) bool {
	e, first := c.claim(key, mac, until, now)
	if first {
		e.finish([]byte(mac))
	}
	return first
}

// TestReplayCache: a MAC is held while its message could still pass the
// time check, from the same key only, and is forgotten after; the map is
// swept of expired MACs as it grows.
func TestReplayCache(t *testing.T) {
	t.Parallel()
	var c replayCache
	now := time.Unix(1_800_000_000, 0)
	until := now.Unix() + 300
	if !c.first("acme", "aa", until, now) {
		t.Fatal("a new MAC counted as seen")
	}
	if c.first("acme", "aa", until, now.Add(300*time.Second)) {
		t.Fatal("a MAC seen again at the last second of its window counted as new")
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

// TestReplayCacheWaitsForTheFirst: a message seen again while the first
// copy is still being answered gets that answer once it is known, and an
// entry still being answered is not swept however old.
func TestReplayCacheWaitsForTheFirst(t *testing.T) {
	t.Parallel()
	var c replayCache
	now := time.Unix(1_800_000_000, 0)
	e, first := c.claim("acme", "aa", now.Unix()+300, now)
	if !first {
		t.Fatal("a new MAC counted as seen")
	}
	again, first := c.claim("acme", "aa", now.Unix()+300, now.Add(3*time.Second))
	if first || again != e {
		t.Fatal("a retransmission while the first is answered is not given the first's entry")
	}
	got := make(chan []byte)
	go func() {
		<-again.done
		got <- again.reply
	}()
	reply := []byte("the answer")
	e.finish(reply)
	reply[0] = 'X' // the entry keeps its own copy
	if r := <-got; string(r) != "the answer" {
		t.Fatalf("the retransmission got %q", r)
	}

	pending, _ := c.claim("acme", "slow", now.Unix(), now)
	later := now.Add(time.Hour)
	for i := range 2000 {
		c.first("acme", strconv.Itoa(i), later.Unix()+300, later)
	}
	if c.seen[replayKey{"acme", "slow"}] != pending {
		t.Fatal("an entry still being answered was swept")
	}
}
