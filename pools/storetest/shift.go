package storetest

import (
	"context"
	"errors"
	"slices"
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
	// Ended early, it never expires: a node that still holds it as it
	// was (cut off from the store meanwhile) reports the expiry, and
	// nothing is recorded.
	for range 3 {
		if err := s.RecordShiftExpiry(c, got); err != nil {
			t.Fatal(err)
		}
	}
	if got := shiftActions(t, c, s, got.ID); !slices.Equal(got, []string{"end/system", "create/system"}) {
		t.Fatalf("audit of the shift ended early, newest first: %v, want no expiry", got)
	}
	testShiftRecords(t, c, s)
}

// shiftActions lists the audit entries of shift id, newest first, as
// action/actor.
func shiftActions(t *testing.T, c context.Context, s pools.Store, id string) []string {
	t.Helper()
	log, err := s.Audit(c, pools.AuditFilter{Kind: pools.KindShift, ObjectID: id}, pools.Page{})
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range log.Items {
		actions = append(actions, e.Action+"/"+e.Actor)
	}
	return actions
}

// testShiftRecords: a scheduled shift's start and its expiry, each
// reported by four nodes at once and again, are one audit entry each (by
// the clock, dated at the start and the expiry) and one event each;
// reported before they come by the store's clock they are an error
// (asked again later) and record nothing. A scheduled shift cancelled
// before its start never starts, an immediate shift's create is its
// start, and a shift the store no longer has records nothing.
func testShiftRecords(t *testing.T, c context.Context, s pools.Store) {
	now := time.Now()
	start := func(zone string, starts time.Time, d string) *pools.Shift {
		t.Helper()
		sh := &pools.Shift{Target: pools.ShiftTarget{Zone: zone}, Reason: "maintenance", Duration: d, StartsAt: starts}
		if err := sh.Prepare(now); err != nil {
			t.Fatal(err)
		}
		got, err := s.StartShift(c, sh, nil)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	got := start("zone-9", now.Add(time.Second), "1s")
	if !got.Scheduled() {
		t.Fatalf("a shift starting in a second is not Scheduled: %+v", got)
	}
	cancelled := start("zone-7", now.Add(time.Hour), "1h")
	if _, err := s.EndShift(c, cancelled.ID); err != nil {
		t.Fatal(err)
	}
	immediate := start("zone-8", time.Time{}, "1h")
	if immediate.Scheduled() {
		t.Fatalf("an immediate shift is Scheduled: %+v", immediate)
	}
	if err := s.RecordShiftStart(c, got); err == nil {
		t.Fatal("a start reported before it came was taken")
	}
	if err := s.RecordShiftExpiry(c, got); err == nil {
		t.Fatal("an expiry reported before it came was taken")
	}
	for _, sh := range []*pools.Shift{cancelled, immediate, {Meta: pools.Meta{ID: "pruned"}}} {
		if err := s.RecordShiftStart(c, sh); err != nil {
			t.Errorf("start of %s: %v, want nothing to record", sh.ID, err)
		}
	}
	if a := shiftActions(t, c, s, cancelled.ID); !slices.Equal(a, []string{"end/system", "create/system"}) {
		t.Errorf("the cancelled shift's audit: %v, want no start", a)
	}
	if a := shiftActions(t, c, s, immediate.ID); !slices.Equal(a, []string{"create/system"}) {
		t.Errorf("the immediate shift's audit: %v, want its create alone", a)
	}
	for deadline := time.Now().Add(10 * time.Second); !time.Now().After(got.ExpiresAt); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the shift did not expire by the clock")
		}
	}
	for _, report := range []func(context.Context, *pools.Shift) error{s.RecordShiftStart, s.RecordShiftExpiry} {
		atOnce(4, func(int) {
			if err := report(c, got); err != nil {
				t.Error(err)
			}
		})
		if err := report(c, got); err != nil {
			t.Fatal(err)
		}
	}
	log, err := s.Audit(c, pools.AuditFilter{Kind: pools.KindShift, ObjectID: got.ID}, pools.Page{})
	if err != nil {
		t.Fatal(err)
	}
	if a := shiftActions(t, c, s, got.ID); !slices.Equal(a, []string{"expire/clock", "start/clock", "create/system"}) {
		t.Fatalf("audit of the scheduled shift, newest first: %v, want one expiry and one start by the clock", a)
	}
	if !log.Items[0].Time.Equal(got.ExpiresAt) || !log.Items[1].Time.Equal(got.StartsAt) {
		t.Errorf("entries dated %v and %v, want the expiry %v and the start %v", log.Items[0].Time, log.Items[1].Time, got.ExpiresAt, got.StartsAt)
	}
	for _, ev := range []pools.Event{pools.ShiftEvent(got, pools.ShiftEventStarted, got.StartsAt, pools.ActorClock),
		pools.ShiftEvent(got, pools.ShiftEventExpired, got.ExpiresAt, pools.ActorClock)} {
		if added, err := s.AddEvent(c, ev); err != nil || added {
			t.Errorf("event %s was not recorded with its entry (added again: %v, %v)", ev.Data.New, added, err)
		}
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
