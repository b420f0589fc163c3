package pools

import (
	"testing"
	"time"
)

// TestReportNodeLag: a node that follows a stream of writes, each report
// finding it one revision behind a newer one, lags by a report at most;
// one that stops following lags from the first revision it lacked, and
// catches up at once when it applies the store's.
func TestReportNodeLag(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var r NodeRecord
	for i := range int64(30) {
		now := t0.Add(time.Duration(i) * time.Second)
		ReportNodeIn(&r, NodeStatus{Name: "n", Revision: i, Store: true}, i+1, now)
		v := r.View(i+1, now, time.Minute)
		if v.Lag.Revisions != 1 || v.Lag.Seconds != 0 || v.State != NodeServing {
			t.Fatalf("report %d, following: %+v", i, v)
		}
	}
	// Stuck at 29 from here while the store moves to 40.
	stuck := t0.Add(30 * time.Second)
	for i := range int64(11) {
		now := stuck.Add(time.Duration(i) * time.Second)
		ReportNodeIn(&r, NodeStatus{Name: "n", Revision: 29, Store: true}, 30+i, now)
	}
	now := stuck.Add(10 * time.Second)
	v := r.View(40, now, time.Minute)
	// Revision 30 was seen at t0+29s (the last report while following).
	if v.Lag.Revisions != 11 || v.Lag.Seconds != 11 || v.State != NodeStale {
		t.Fatalf("stuck: %+v", v)
	}
	// Applies 35: still lacks 36, seen 6 s into the stall.
	ReportNodeIn(&r, NodeStatus{Name: "n", Revision: 35, Store: true}, 40, now)
	if v := r.View(40, now, time.Minute); v.Lag.Revisions != 5 || v.Lag.Seconds != 4 || v.State != NodeServing {
		t.Fatalf("part caught up: %+v", v)
	}
	ReportNodeIn(&r, NodeStatus{Name: "n", Revision: 40, Store: true}, 40, now)
	if v := r.View(40, now, time.Minute); v.Lag != (NodeLag{}) || r.Missed != nil {
		t.Fatalf("caught up: %+v %+v", v, r.Missed)
	}
	// Gone after the gone-after time, whatever else holds.
	if v := r.View(40, now.Add(time.Minute), time.Minute); v.State != NodeGone {
		t.Fatalf("a minute silent: %+v", v)
	}
}
