package healthcheck

import "testing"

// run feeds results ("u" success, "d" failure) and returns the state after
// each one as a string of "U"/"D".
func run(th threshold, seq string) string {
	out := make([]byte, len(seq))
	for i := range seq {
		th.observe(seq[i] == 'u')
		out[i] = 'D'
		if th.Healthy() {
			out[i] = 'U'
		}
	}
	return string(out)
}

func TestThresholdSequences(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		up, down int
		seq      string
		want     string
	}{
		{"down after exactly three failures", 1, 3, "uddd", "UUUD"},
		{"a success between failures resets the count", 1, 3, "uddudddd", "UUUUUUDD"},
		{"up after exactly two successes", 2, 1, "udduu", "UDDDU"},
		{"a failure between successes resets the count", 2, 1, "uduudu", "UDDUDD"},
		{"zero thresholds mean one", 0, 0, "ududu", "UDUDU"},
		{"the first result decides: down", 3, 3, "dddu", "DDDD"},
		{"the first result decides: up", 3, 3, "uddu", "UUUU"},
		{"flapping never crosses a threshold of two", 2, 2, "udududud", "UUUUUUUU"},
		{"recovering after an outage", 2, 2, "uddduuu", "UUDDDUU"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := run(newThreshold(tc.up, tc.down), tc.seq); got != tc.want {
				t.Errorf("up=%d down=%d %s: got %s, want %s", tc.up, tc.down, tc.seq, got, tc.want)
			}
		})
	}
}

func TestThresholdUnknownCountsHealthy(t *testing.T) {
	t.Parallel()
	th := newThreshold(3, 3)
	if !th.Healthy() {
		t.Fatal("an origin with no result must count as healthy")
	}
	if changed := th.observe(true); changed {
		t.Error("a first success changed the state of an origin already counted healthy")
	}
	th = newThreshold(3, 3)
	if changed := th.observe(false); !changed || th.Healthy() {
		t.Errorf("a first failure: changed=%v healthy=%v, want a change to down", changed, th.Healthy())
	}
}

func TestThresholdReportsChangesOnly(t *testing.T) {
	t.Parallel()
	th := newThreshold(1, 2)
	var changes []int
	for i, ok := range []bool{true, false, false, false, true, true} {
		if th.observe(ok) {
			changes = append(changes, i)
		}
	}
	if len(changes) != 2 || changes[0] != 2 || changes[1] != 4 {
		t.Errorf("changes at %v, want [2 4]", changes)
	}
}

func TestThresholdRestartKeepsStateForgetsStreak(t *testing.T) {
	t.Parallel()
	th := newThreshold(1, 3)
	th.observe(true)
	th.observe(false)
	th.observe(false)
	th.restart(1, 3)
	th.observe(false)
	if !th.Healthy() {
		t.Error("after restart a single failure took the origin down: the streak was not forgotten")
	}
	th.observe(false)
	th.observe(false)
	if th.Healthy() {
		t.Error("three failures after restart did not take the origin down")
	}
}
