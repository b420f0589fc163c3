package main

import (
	"slices"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

// TestShiftsNewlyIn: a node reports a shift's start and its expiry once:
// the shifts in the state asked for now, each the first time it is seen.
func TestShiftsNewlyIn(t *testing.T) {
	now := time.Now()
	shift := func(id string, starts, expires time.Duration) pools.Shift {
		return pools.Shift{Meta: pools.Meta{ID: id}, StartsAt: now.Add(starts), ExpiresAt: now.Add(expires)}
	}
	shifts := []pools.Shift{
		shift("active", -time.Minute, time.Hour),
		shift("scheduled", time.Hour, 2*time.Hour),
		shift("expired", -2*time.Hour, -time.Hour),
	}
	ids := func(sh []pools.Shift) []string {
		var out []string
		for _, s := range sh {
			out = append(out, s.ID)
		}
		return out
	}
	var started, expired map[string]bool
	for _, c := range []struct {
		state string
		seen  *map[string]bool
		want  []string
	}{
		{pools.ShiftActive, &started, []string{"active"}},
		{pools.ShiftActive, &started, nil}, // reported already
		{pools.ShiftExpired, &expired, []string{"expired"}},
		{pools.ShiftExpired, &expired, nil},
	} {
		if got := ids(shiftsNewlyIn(shifts, c.state, c.seen)); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.state, got, c.want)
		}
	}
}
