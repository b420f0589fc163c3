package dnssec

import "time"

// Policy sets the validity window of the signatures made.
type Policy struct {
	// Validity is how long a signature is valid from when it is made.
	// Default 7 days.
	Validity time.Duration
	// Jitter is the most random extra validity added per signature, so
	// that signatures made together (by one node after a restart, or by
	// every node after a key change) do not expire together. Default 1 day.
	Jitter time.Duration
	// Refresh: a cached signature with less than this left is made anew.
	// It must exceed the longest TTL served, so that no resolver holds a
	// signature past its expiry. Default 3 days.
	Refresh time.Duration
	// Backdate is subtracted from the inception against clock skew
	// between glb and resolvers. Default 1 hour.
	Backdate time.Duration
}

func (p Policy) withDefaults() Policy {
	if p.Validity <= 0 {
		p.Validity = 7 * 24 * time.Hour
	}
	if p.Jitter < 0 {
		p.Jitter = 0
	} else if p.Jitter == 0 {
		p.Jitter = 24 * time.Hour
	}
	if p.Refresh <= 0 || p.Refresh >= p.Validity {
		p.Refresh = min(3*24*time.Hour, p.Validity/2)
	}
	if p.Backdate <= 0 {
		p.Backdate = time.Hour
	}
	return p
}
