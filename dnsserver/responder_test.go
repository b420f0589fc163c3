package dnsserver

import (
	"bytes"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestResponderAnswersAsHandle: a Responder answers every UDP behaviour
// case as the sockets' handler does, and allocates nothing doing it.
func TestResponderAnswersAsHandle(t *testing.T) {
	s := newTestServer(t, prometheus.NewRegistry())
	qs, want := pathQueries(t)
	r := s.NewResponder()
	out := make([]byte, 0, 65535)
	now := time.Now()
	for i, q := range qs {
		got := r.Respond(q, netipLoopback, now, out)
		exp := s.handle(q, netipLoopback, false, nil)
		if (got != nil) != want[i] || !bytes.Equal(got, exp) {
			t.Errorf("query %d: Respond\n%x\nhandle\n%x", i, got, exp)
		}
	}
	allocs := testing.AllocsPerRun(200, func() {
		for _, q := range qs {
			r.Respond(q, netipLoopback, now, out)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per pass over %d queries, want 0", allocs, len(qs))
	}
}
