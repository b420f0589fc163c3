package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/glb-dns/glb/pools"
)

// StartShift stores s unless guard refuses it; see pools.StartShiftIn.
func (s *Store) StartShift(ctx context.Context, sh *pools.Shift, guard func([]pools.Shift) error) (*pools.Shift, error) {
	return writeOne(s, ctx, pools.KindShift, func(t *pools.Recorder) (*pools.Shift, int64, error) {
		tx := t.Tx.(*txn)
		list := func() ([]pools.Shift, error) { return readAll[pools.Shift](tx.ctx, tx.tx, pools.KindShift) }
		return pools.StartShiftIn(t, sh, guard, list, s.now())
	})
}

// EndShift ends a shift early; see pools.EndShiftIn.
func (s *Store) EndShift(ctx context.Context, id string) (*pools.Shift, error) {
	return writeOne(s, ctx, pools.KindShift, func(t *pools.Recorder) (*pools.Shift, int64, error) {
		return pools.EndShiftIn(t, id, s.now())
	})
}

// RecordShiftExpiry audits sh's expiry once: a partial unique index keeps
// a second node's entry out.
func (s *Store) RecordShiftExpiry(ctx context.Context, sh *pools.Shift) error {
	return s.recordShift(ctx, sh.ID, pools.ShiftEventExpired)
}

// RecordShiftStart audits scheduled shift sh's start once, as
// RecordShiftExpiry does its expiry.
func (s *Store) RecordShiftStart(ctx context.Context, sh *pools.Shift) error {
	return s.recordShift(ctx, sh.ID, pools.ShiftEventStarted)
}

// recordShift writes the audit entry and the event of shift id reaching
// state, from the shift as stored, when pools.ShiftRecordDue says so.
func (s *Store) recordShift(ctx context.Context, id, state string) error {
	var notYet error
	err := s.write(ctx, func(t *txn) error {
		o, err := t.Get(pools.KindShift, id)
		if errors.Is(err, pools.ErrNotFound) {
			return nil // pruned: nothing to record
		} else if err != nil {
			return err
		}
		sh := o.(*pools.Shift)
		due, err := pools.ShiftRecordDue(sh, state, s.now())
		if err != nil || !due {
			notYet = err
			return nil
		}
		e, ev, action, err := shiftRecord(ctx, sh, state)
		if err != nil {
			return err
		}
		// action is one of two constants: the partial index's predicate.
		_, err = t.tx.Exec(t.ctx, `insert into audit_log (revision, at, actor, method, action, kind, object_id, before, after)
			values ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb)
			on conflict (object_id) where kind = 'shifts' and action = '`+action+`' do nothing`,
			e.Revision, e.Time, e.Actor, e.Method, e.Action, string(e.Kind), e.ObjectID, string(e.Before), string(e.After))
		if err != nil {
			return err
		}
		// The event's id is the shift's and the state's: the second node's
		// insert finds it and adds nothing.
		_, err = t.addEvent(&ev, "")
		return err
	})
	if err != nil {
		return err
	}
	return notYet
}

// shiftRecord is the audit entry and the event of sh reaching state, and
// the entry's action.
func shiftRecord(ctx context.Context, sh *pools.Shift, state string) (pools.AuditEntry, pools.Event, string, error) {
	if state == pools.ShiftEventStarted {
		e, err := pools.ShiftStartEntry(ctx, sh)
		return e, pools.ShiftEvent(sh, state, sh.StartsAt, pools.ActorClock), pools.ActionStart, err
	}
	e, err := pools.ShiftExpiryEntry(ctx, sh)
	return e, pools.ShiftEvent(sh, state, sh.ExpiresAt, pools.ActorClock), pools.ActionExpire, err
}

// PruneShifts deletes shifts no longer in force since before; see
// pools.PruneShiftsIn.
func (s *Store) PruneShifts(ctx context.Context, before time.Time) (int, error) {
	var n int
	err := s.write(ctx, func(t *txn) error {
		list, err := readAll[pools.Shift](t.ctx, t.tx, pools.KindShift)
		if err != nil {
			return err
		}
		n, _, err = pools.PruneShiftsIn(t, list, before)
		return err
	})
	return n, err
}
