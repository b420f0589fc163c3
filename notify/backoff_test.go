package notify

import (
	"testing"
	"time"
)

// TestRetryBackoff: the wait doubles from Base up to Max (a tenth of
// jitter on top), the last attempt falls at the end of the window, and
// past the window the delivery is given up.
func TestRetryBackoff(t *testing.T) {
	t.Parallel()
	r := Retry{Base: time.Second, Max: 10 * time.Second, Window: time.Hour}.withDefaults()
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	now := at.Add(time.Minute)
	for attempts, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 8 * time.Second, 5: 10 * time.Second, 30: 10 * time.Second} {
		wait := r.next(attempts, at, now).Sub(now)
		if wait < want || wait > want+want/10 {
			t.Errorf("after %d failures: wait %v, want %v to %v", attempts, wait, want, want+want/10)
		}
	}
	if got := r.next(3, at, at.Add(time.Hour-time.Second)); !got.Equal(at.Add(time.Hour)) {
		t.Errorf("near the end of the window: next %v, want the window's end %v", got, at.Add(time.Hour))
	}
	if got := r.next(3, at, at.Add(time.Hour)); !got.IsZero() {
		t.Errorf("at the end of the window: next %v, want given up", got)
	}
	if d := (Retry{}).withDefaults(); d.Base != 5*time.Second || d.Max != 10*time.Minute || d.Window != 24*time.Hour {
		t.Errorf("defaults %+v", d)
	}
}
