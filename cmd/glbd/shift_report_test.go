package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/glb-dns/glb/pools"
)

// TestShiftRecords: the records a configuration's shifts call for are the
// start of each scheduled shift that has started (an immediate shift's
// create is its start; one ended before its start never started) and the
// expiry of each that reached it (not of one ended early).
func TestShiftRecords(t *testing.T) {
	now := time.Now()
	shift := func(id string, created, starts, expires time.Duration, ended ...time.Duration) pools.Shift {
		sh := pools.Shift{Meta: pools.Meta{ID: id, CreatedOn: now.Add(created)}, StartsAt: now.Add(starts), ExpiresAt: now.Add(expires)}
		if len(ended) > 0 {
			e := now.Add(ended[0])
			sh.EndedAt = &e
		}
		return sh
	}
	cfg := &pools.Config{Shifts: []pools.Shift{
		shift("immediate", -time.Minute, -time.Minute, time.Hour),
		shift("started", -2*time.Hour, -time.Minute, time.Hour),
		shift("later", -time.Minute, time.Hour, 2*time.Hour),
		shift("expired", -3*time.Hour, -3*time.Hour, -time.Hour),
		shift("both", -3*time.Hour, -2*time.Hour, -time.Hour),
		shift("ended-before-start", -3*time.Hour, -time.Hour, time.Hour, -2*time.Hour),
		shift("ended-early", -3*time.Hour, -3*time.Hour, -time.Hour, -2*time.Hour),
		shift("starts-now", -time.Hour, 0, time.Hour),
	}}
	var keys []string
	for _, r := range shiftRecords(cfg, nil, slog.New(slog.DiscardHandler), now) {
		keys = append(keys, r.key)
	}
	want := []string{"shift/started/start", "shift/expired/expire", "shift/both/start", "shift/both/expire", "shift/starts-now/start"}
	if !slices.Equal(keys, want) {
		t.Errorf("records %v, want %v", keys, want)
	}
}

// TestClockRecordsRetryUntilStored: a record the store cannot take stays
// queued and is written on a later round, once; what follows it waits
// (the store is away); a record another node already moved on (a domain
// error) is not retried; one refused for another reason is retried
// without holding up the rest; records are written in the order they
// happened;
// a record stored is not written again when the node sees it due again,
// and forgetting its object forgets it.
func TestClockRecordsRetryUntilStored(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := newClockRecords(slog.New(slog.DiscardHandler), reg)
	ctx := context.Background()
	var order []string
	away := 2 // the store refuses the first two rounds
	rec := func(key string, at time.Duration, fail func() error) clockRecord {
		base := time.Unix(1e9, 0)
		return clockRecord{key: key, object: key, at: base.Add(at), what: key, write: func(context.Context) error {
			order = append(order, key)
			return fail()
		}}
	}
	unavailable := func() error {
		if away > 0 {
			return fmt.Errorf("dial: %w", pools.ErrUnavailable)
		}
		return nil
	}
	moved := func() error { return fmt.Errorf("rollout x is at revision 3, not 2: %w", pools.ErrStale) }
	ok := func() error { return nil }
	r.add(rec("expiry", 2*time.Second, unavailable), rec("start", time.Second, ok), rec("completion", 3*time.Second, moved))
	pending := func() int { return int(testutil.ToFloat64(r.pending)) }
	if pending() != 3 {
		t.Fatalf("pending %d, want 3", pending())
	}
	for round := 1; round <= 2; round++ {
		order = nil
		r.flush(ctx)
		away--
		// The start is stored in round 1; the expiry fails and ends the
		// round, so the completion waits.
		want := []string{"start", "expiry"}
		if round == 2 {
			want = []string{"expiry"}
		}
		if !slices.Equal(order, want) {
			t.Fatalf("round %d wrote %v, want %v", round, order, want)
		}
		if pending() != 2 {
			t.Fatalf("round %d: pending %d, want 2", round, pending())
		}
	}
	order = nil
	r.flush(ctx)
	if !slices.Equal(order, []string{"expiry", "completion"}) || pending() != 0 {
		t.Fatalf("once the store is back: wrote %v, %d pending; want the expiry then the completion, none pending", order, pending())
	}
	order = nil
	r.add(rec("start", time.Second, ok), rec("expiry", 2*time.Second, ok), rec("completion", 3*time.Second, ok))
	r.flush(ctx)
	if len(order) != 0 || pending() != 0 {
		t.Fatalf("records stored already were written again: %v", order)
	}
	// A record the store refuses for a reason of its own (not away, not
	// moved on) is kept for the next round and holds up nothing after it.
	order = nil
	odd := 1
	r.add(rec("odd", 4*time.Second, func() error {
		if odd > 0 {
			odd--
			return errors.New("postgres: something unforeseen")
		}
		return nil
	}), rec("after", 5*time.Second, ok))
	r.flush(ctx)
	if !slices.Equal(order, []string{"odd", "after"}) || pending() != 1 {
		t.Fatalf("a record refused for no known reason: wrote %v, %d pending; want both tried, the refused one pending", order, pending())
	}
	order = nil
	r.flush(ctx)
	if !slices.Equal(order, []string{"odd"}) || pending() != 0 {
		t.Fatalf("the next round wrote %v, %d pending; want the refused record again, none pending", order, pending())
	}
	order = nil
	r.forget(map[string]bool{"expiry": true, "completion": true})
	r.add(rec("start", time.Second, ok))
	r.flush(ctx)
	if !slices.Equal(order, []string{"start"}) {
		t.Fatalf("a record of a forgotten object, seen due again: wrote %v, want it written", order)
	}
}
