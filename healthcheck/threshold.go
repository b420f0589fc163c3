package healthcheck

// threshold is the consecutive_up / consecutive_down hysteresis of one
// origin. It is a plain value with no clock and no I/O so that its rules
// can be tested alone.
//
// Rules:
//   - Before the first result the origin counts as healthy (SPEC §3).
//   - The first result decides the state directly: the "healthy" before it
//     was an assumption, not an observation, and holding a dead new origin
//     in DNS for consecutive_down intervals would be worse than acting at
//     once. The same holds after a node restart.
//   - After that, the state flips only after `down` failures or `up`
//     successes in a row; every result resets the opposite streak, so a
//     single success between failures starts the count to down again.
type threshold struct {
	up, down int // checks in a row to flip; always ≥ 1

	known   bool // a result has been seen
	healthy bool // meaningful when known

	successes int // current streak of successes
	failures  int // current streak of failures
}

// newThreshold returns the hysteresis for a monitor's consecutive_up and
// consecutive_down (0 means 1, as in Cloudflare).
func newThreshold(up, down int) threshold {
	return threshold{up: max(up, 1), down: max(down, 1)}
}

// Healthy is the origin's state; true before the first result.
func (t *threshold) Healthy() bool { return !t.known || t.healthy }

// observe records one check result and reports whether Healthy changed.
func (t *threshold) observe(ok bool) (changed bool) {
	before := t.Healthy()
	if ok {
		t.successes++
		t.failures = 0
	} else {
		t.failures++
		t.successes = 0
	}
	switch {
	case !t.known:
		t.known, t.healthy = true, ok
	case t.healthy && t.failures >= t.down:
		t.healthy = false
	case !t.healthy && t.successes >= t.up:
		t.healthy = true
	}
	return t.Healthy() != before
}

// reset sets the state to ok at once, with no streak, and reports
// whether Healthy changed: a feed gone silent sees the origin up whatever
// consecutive_up says (fail open).
func (t *threshold) reset(ok bool) (changed bool) {
	before := t.Healthy()
	t.known, t.healthy, t.successes, t.failures = true, ok, 0, 0
	return t.Healthy() != before
}

// restart keeps the state but forgets the streaks: a changed monitor or
// origin starts counting afresh from its current state.
func (t *threshold) restart(up, down int) {
	t.up, t.down = max(up, 1), max(down, 1)
	t.successes, t.failures = 0, 0
}
