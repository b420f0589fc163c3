package notify

import (
	"math/rand/v2"
	"time"
)

// Retry says when to try a failed delivery again.
type Retry struct {
	// Base is the wait after the first failure; it doubles with each
	// one. Default 5s.
	Base time.Duration
	// Max bounds the wait between attempts. Default 10m.
	Max time.Duration
	// Window is how long after its event a delivery is tried at all;
	// after it the delivery is given up (failed). Default 24h.
	Window time.Duration
}

func (r Retry) withDefaults() Retry {
	if r.Base <= 0 {
		r.Base = 5 * time.Second
	}
	if r.Max <= 0 {
		r.Max = 10 * time.Minute
	}
	if r.Window <= 0 {
		r.Window = 24 * time.Hour
	}
	return r
}

// next is when to try again after attempts failures of an event of at,
// failing at now; zero gives up. A tenth of jitter keeps the deliveries
// that failed together (a receiver down) from coming back together.
func (r Retry) next(attempts int, at, now time.Time) time.Time {
	if now.Sub(at) >= r.Window {
		return time.Time{}
	}
	wait := r.Base
	for i := 1; i < attempts && wait < r.Max; i++ {
		wait *= 2
	}
	wait = min(wait, r.Max)
	wait += time.Duration(rand.Int64N(int64(wait)/10 + 1))
	if deadline := at.Add(r.Window); now.Add(wait).After(deadline) {
		return deadline
	}
	return now.Add(wait)
}
