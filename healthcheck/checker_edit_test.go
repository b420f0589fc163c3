package healthcheck

import (
	"net/http"
	"testing"
)

// TestEditedMonitorKeepsTheOriginDown: editing a monitor must not put a
// dead origin back into DNS. With consecutive_up 3, one success after the
// edit is not enough to call it healthy; an edit that forgot the state
// would take that first result as the whole truth.
func TestEditedMonitorKeepsTheOriginDown(t *testing.T) {
	t.Parallel()
	seq := &sequence{codes: []int{http.StatusServiceUnavailable}}
	s := newSite(t, "edited", seq, 100) // no scheduled check within the test
	s.mon.ConsecutiveUp = 3
	c := start(t, Options{Node: "n1", Region: "WEU"})
	c.Update(configOf(s))
	eventually(t, "the origin seen down", func() bool {
		st, ok := stateOf(c.View(), "edited")
		return ok && !st.Healthy
	})
	down, _ := stateOf(c.View(), "edited")

	seq.mu.Lock()
	seq.codes = []int{http.StatusOK}
	seq.mu.Unlock()
	s.mon.Path = "/edited"
	c.Update(configOf(s))
	eventually(t, "the edited monitor's first check recorded", func() bool { return c.checksOf("edited") >= 1 })

	st, ok := stateOf(c.View(), "edited")
	if !ok || st.Healthy {
		t.Fatalf("after the edit and one success: %+v (in view: %v), want still down (consecutive_up 3)", st, ok)
	}
	if st.Reason != down.Reason {
		t.Errorf("reason %q, want the one before the edit, %q", st.Reason, down.Reason)
	}
	if r := seq.lastRequest(); r == nil || r.URL.Path != "/edited" {
		t.Fatalf("the edited monitor did not check: %v", r)
	}
}
