package postgres

import (
	"testing"
	"time"
)

// The tracker says what a follow read waits for and for how long the
// replica has been behind what the primary said.
func TestLSNTracker(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var tr lsnTracker
	if want, lag := tr.replayed(0, t0); want != 0 || lag != 0 {
		t.Fatalf("nothing from the primary yet: want %d lag %v, not 0 0", want, lag)
	}
	tr.primaryAt(100, t0)
	tr.primaryAt(200, t0.Add(time.Second))
	tr.primaryAt(150, t0.Add(2*time.Second)) // older news changes nothing
	if want, lag := tr.replayed(50, t0.Add(3*time.Second)); want != 200 || lag != 3*time.Second {
		t.Fatalf("behind the first position: want %d lag %v, not 200 3s", want, lag)
	}
	// Past the first: behind since at least now.
	if want, lag := tr.replayed(120, t0.Add(4*time.Second)); want != 200 || lag != 0 {
		t.Fatalf("past the first position: want %d lag %v, not 200 0s", want, lag)
	}
	if want, lag := tr.replayed(120, t0.Add(6*time.Second)); want != 200 || lag != 2*time.Second {
		t.Fatalf("still short of the second: want %d lag %v, not 200 2s", want, lag)
	}
	if want, lag := tr.replayed(200, t0.Add(7*time.Second)); want != 0 || lag != 0 {
		t.Fatalf("caught up: want %d lag %v, not 0 0", want, lag)
	}
	// Caught up, the next position starts a new wait.
	tr.primaryAt(300, t0.Add(8*time.Second))
	if want, lag := tr.replayed(200, t0.Add(9*time.Second)); want != 300 || lag != time.Second {
		t.Fatalf("a new position: want %d lag %v, not 300 1s", want, lag)
	}
}
