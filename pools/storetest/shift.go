package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

// testShifts: a shift is stored with its times, follows the change feed
// into Config, refuses what its guard refuses (storing nothing), ends
// early once, and its expiry is audited once however often reported.
func testShifts(t *testing.T, c context.Context, s pools.Store) {
	sh := &pools.Shift{Target: pools.ShiftTarget{Zone: "zone-1"}, Reason: "bad deploy", Duration: "2h"}
	if err := sh.Prepare(time.Now()); err != nil {
		t.Fatal(err)
	}
	rev0, err := s.Revision(c)
	if err != nil {
		t.Fatal(err)
	}
	refused := errors.New("refused")
	var seen []pools.Shift
	if _, err := s.StartShift(c, sh, func(stored []pools.Shift) error { seen = stored; return refused }); !errors.Is(err, refused) {
		t.Fatalf("guard refused, got %v", err)
	}
	if len(seen) != 0 {
		t.Fatalf("guard saw %d shifts in an empty store", len(seen))
	}
	if res, _ := s.List(c, pools.KindShift, pools.Page{}); res.TotalCount != 0 {
		t.Fatalf("a refused shift was stored: %d", res.TotalCount)
	}
	got, err := s.StartShift(c, sh, func(stored []pools.Shift) error { seen = stored; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if got.ID == "" || got.Revision != 1 || !got.ExpiresAt.Equal(sh.ExpiresAt) || got.EndedAt != nil {
		t.Fatalf("stored %+v", got)
	}
	// Two shifts started at once: each guard sees the other's when it runs
	// second, never neither of them.
	counts := make([]int, 2)
	atOnce(2, func(i int) {
		other := *sh
		other.Target = pools.ShiftTarget{Zone: "zone-2"}
		if _, err := s.StartShift(c, &other, func(stored []pools.Shift) error { counts[i] = len(stored); return nil }); err != nil {
			t.Error(err)
		}
	})
	if !(counts[0] == 1 && counts[1] == 2 || counts[0] == 2 && counts[1] == 1) {
		t.Fatalf("concurrent guards saw %v stored shifts, want 1 and 2", counts)
	}
	cs, err := s.Changes(c, rev0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ch := range cs.Changes {
		found = found || ch.Kind == pools.KindShift && ch.ID == got.ID
	}
	if !found {
		t.Fatalf("change feed since %d lacks the shift: %+v", rev0, cs.Changes)
	}
	cfg, err := s.Config(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Shifts) != 3 || cfg.Shifts[0].ID != got.ID {
		t.Fatalf("config shifts %+v", cfg.Shifts)
	}
	ended, err := s.EndShift(c, got.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ended.EndedAt == nil || ended.State(time.Now().Add(time.Millisecond)) != pools.ShiftEnded {
		t.Fatalf("ended shift %+v", ended)
	}
	var ve *pools.ValidationError
	if _, err := s.EndShift(c, got.ID); !errors.As(err, &ve) {
		t.Fatalf("ending twice: %v", err)
	}
	if _, err := s.EndShift(c, "nope"); !errors.Is(err, pools.ErrNotFound) {
		t.Fatalf("ending a missing shift: %v", err)
	}
	for range 3 {
		if err := s.RecordShiftExpiry(c, got); err != nil {
			t.Fatal(err)
		}
	}
	log, err := s.Audit(c, pools.AuditFilter{Kind: pools.KindShift, ObjectID: got.ID}, pools.Page{})
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range log.Items {
		actions = append(actions, e.Action)
	}
	if len(actions) != 3 || actions[0] != pools.ActionExpire || actions[1] != pools.ActionEnd || actions[2] != pools.ActionCreate {
		t.Fatalf("audit of the shift, newest first: %v", actions)
	}
	if !log.Items[0].Time.Equal(got.ExpiresAt) || log.Items[0].Actor != pools.ActorClock {
		t.Fatalf("expiry entry %+v", log.Items[0])
	}
	testShiftStartRecorded(t, c, s)
}

// testShiftStartRecorded: a scheduled shift's start, reported by four
// nodes at once and again, is one audit entry (action start, by the
// clock, dated at the start) and one event; an immediate shift is not
// Scheduled (its create is its start).
func testShiftStartRecorded(t *testing.T, c context.Context, s pools.Store) {
	now := time.Now()
	sh := &pools.Shift{Target: pools.ShiftTarget{Zone: "zone-9"}, Reason: "maintenance", Duration: "1h", StartsAt: now.Add(time.Hour)}
	if err := sh.Prepare(now); err != nil {
		t.Fatal(err)
	}
	got, err := s.StartShift(c, sh, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Scheduled() {
		t.Fatalf("a shift starting in an hour is not Scheduled: %+v", got)
	}
	atOnce(4, func(int) {
		if err := s.RecordShiftStart(c, got); err != nil {
			t.Error(err)
		}
	})
	if err := s.RecordShiftStart(c, got); err != nil {
		t.Fatal(err)
	}
	log, err := s.Audit(c, pools.AuditFilter{Kind: pools.KindShift, ObjectID: got.ID}, pools.Page{})
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range log.Items {
		actions = append(actions, e.Action+"/"+e.Actor)
	}
	if len(actions) != 2 || actions[0] != pools.ActionStart+"/"+pools.ActorClock || actions[1] != pools.ActionCreate+"/"+pools.ActorSystem {
		t.Fatalf("audit of the scheduled shift, newest first: %v, want one start by the clock and the create", actions)
	}
	if !log.Items[0].Time.Equal(got.StartsAt) {
		t.Errorf("start entry dated %v, want the start %v", log.Items[0].Time, got.StartsAt)
	}
	if added, err := s.AddEvent(c, pools.ShiftEvent(got, pools.ShiftEventStarted, got.StartsAt, pools.ActorClock)); err != nil || added {
		t.Errorf("the start's event was not recorded by RecordShiftStart (added again: %v, %v)", added, err)
	}
	now = time.Now()
	at := &pools.Shift{Target: pools.ShiftTarget{Zone: "zone-8"}, Reason: "now", Duration: "1h"}
	if err := at.Prepare(now); err != nil {
		t.Fatal(err)
	}
	if got, err = s.StartShift(c, at, nil); err != nil || got.Scheduled() {
		t.Fatalf("an immediate shift %+v is Scheduled (%v)", got, err)
	}
}

// testShiftPrune: pruning deletes exactly the shifts that stopped being in
// force before the given time, in one revision that the change feed
// carries as deletions; with nothing to prune it writes nothing.
func testShiftPrune(t *testing.T, c context.Context, s pools.Store) {
	start := func(zone, d string) *pools.Shift {
		sh := &pools.Shift{Target: pools.ShiftTarget{Zone: zone}, Reason: "r", Duration: d}
		if err := sh.Prepare(time.Now()); err != nil {
			t.Fatal(err)
		}
		out, err := s.StartShift(c, sh, func([]pools.Shift) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	ended, kept := start("zone-1", "2h"), start("zone-2", "2h")
	if _, err := s.EndShift(c, ended.ID); err != nil {
		t.Fatal(err)
	}
	rev0, _ := s.Revision(c)
	if n, err := s.PruneShifts(c, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("prune before anything ended: %d %v", n, err)
	}
	if rev, _ := s.Revision(c); rev != rev0 {
		t.Fatalf("a prune with nothing to delete moved the revision %d → %d", rev0, rev)
	}
	if n, err := s.PruneShifts(c, time.Now().Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("prune an hour ahead: %d %v, want the ended shift only", n, err)
	}
	rev1, _ := s.Revision(c)
	if rev1 != rev0+1 {
		t.Errorf("prune moved the revision %d → %d, want one step", rev0, rev1)
	}
	cfg, err := s.Config(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Shifts) != 1 || cfg.Shifts[0].ID != kept.ID {
		t.Errorf("shifts after the prune %+v, want only %s", cfg.Shifts, kept.ID)
	}
	if _, err := s.Get(c, pools.KindShift, ended.ID); !errors.Is(err, pools.ErrNotFound) {
		t.Errorf("the pruned shift: %v, want not found", err)
	}
	if f, ok := s.(pools.ChangeFeed); ok {
		cs, err := f.Changes(c, rev0)
		if err != nil {
			t.Fatal(err)
		}
		if len(cs.Changes) != 1 || cs.Changes[0].ID != ended.ID || cs.Changes[0].Object != nil {
			t.Errorf("change feed after the prune %+v, want the deletion of %s", cs.Changes, ended.ID)
		}
	}
}
