package embedded

import (
	"context"
	"errors"
	"time"

	"go.etcd.io/bbolt"

	"github.com/glb-dns/glb/pools"
)

// StartShift stores s unless guard refuses it; see pools.StartShiftIn.
func (s *Store) StartShift(ctx context.Context, sh *pools.Shift, guard func([]pools.Shift) error) (*pools.Shift, error) {
	return writeOne(s, ctx, pools.KindShift, func(t *pools.Recorder) (*pools.Shift, int64, error) {
		list := func() ([]pools.Shift, error) { return listAll[pools.Shift](t.Tx.(txn).tx, pools.KindShift) }
		return pools.StartShiftIn(t, sh, guard, list, s.now())
	})
}

// EndShift ends a shift early; see pools.EndShiftIn.
func (s *Store) EndShift(ctx context.Context, id string) (*pools.Shift, error) {
	return writeOne(s, ctx, pools.KindShift, func(t *pools.Recorder) (*pools.Shift, int64, error) {
		return pools.EndShiftIn(t, id, s.now())
	})
}

// RecordShiftExpiry audits sh's expiry once.
func (s *Store) RecordShiftExpiry(ctx context.Context, sh *pools.Shift) error {
	return s.recordShift(ctx, sh.ID, pools.ShiftEventExpired, shiftExpiryBucket)
}

// RecordShiftStart audits scheduled shift sh's start once.
func (s *Store) RecordShiftStart(ctx context.Context, sh *pools.Shift) error {
	return s.recordShift(ctx, sh.ID, pools.ShiftEventStarted, shiftStartBucket)
}

// recordShift writes the audit entry and the event of shift id reaching
// state, from the shift as stored, when pools.ShiftRecordDue says so,
// unless bucket already holds the shift's id: the first report writes,
// the others find it.
func (s *Store) recordShift(ctx context.Context, id, state string, bucket []byte) error {
	var notYet error
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucket)
		if b.Get([]byte(id)) != nil {
			return nil
		}
		o, err := (txn{tx}).Get(pools.KindShift, id)
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
		var e pools.AuditEntry
		var ev pools.Event
		if state == pools.ShiftEventStarted {
			e, err = pools.ShiftStartEntry(ctx, sh)
			ev = pools.ShiftEvent(sh, state, sh.StartsAt, pools.ActorClock)
		} else {
			e, err = pools.ShiftExpiryEntry(ctx, sh)
			ev = pools.ShiftEvent(sh, state, sh.ExpiresAt, pools.ActorClock)
		}
		if err != nil {
			return err
		}
		if err := b.Put([]byte(id), []byte{1}); err != nil {
			return err
		}
		if err := appendAudit(tx, &e); err != nil {
			return err
		}
		_, err = addEvent(tx, &ev, "")
		return err
	})
	if err != nil {
		return err
	}
	return notYet
}

// PruneShifts deletes shifts no longer in force since before; see
// pools.PruneShiftsIn.
func (s *Store) PruneShifts(ctx context.Context, before time.Time) (int, error) {
	var n int
	var rev int64
	err := s.batch(ctx, func(tx *bbolt.Tx) error {
		list, err := listAll[pools.Shift](tx, pools.KindShift)
		if err != nil {
			return err
		}
		n, rev, err = pools.PruneShiftsIn(txn{tx}, list, before)
		return err
	})
	if err != nil {
		return 0, err
	}
	if rev > 0 {
		s.watchers.Notify(pools.Change{Revision: rev})
	}
	return n, nil
}
