package dnsserver

import "time"

// latencySample: one query in this many per worker is timed for the
// duration histogram. Reading the clock twice and observing cost about a
// quarter of the handler's own time in a profile under load (the clock is
// slow under virtualisation); a sample describes the distribution as well.
const latencySample = 16

// clock is the time a query is answered at (signatures, rate limiting,
// latency): when the reader set it, the time its last read returned, so
// that a batch of queries reads the clock once; otherwise now.
func (w *worker) clock() time.Time {
	if !w.arrived.IsZero() {
		return w.arrived
	}
	return time.Now()
}

// sampled returns start for one query in latencySample, else the zero
// time, which metrics.query does not observe.
func (w *worker) sampled(start time.Time) time.Time {
	w.timed++
	if w.timed%latencySample != 0 {
		return time.Time{}
	}
	return start
}
