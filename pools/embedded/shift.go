package embedded

import (
	"context"
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
	e, err := pools.ShiftExpiryEntry(ctx, sh)
	if err != nil {
		return err
	}
	return s.recordShiftOnce(ctx, shiftExpiryBucket, &e, pools.ShiftEvent(sh, pools.ShiftEventExpired, sh.ExpiresAt, pools.ActorClock))
}

// RecordShiftStart audits scheduled shift sh's start once.
func (s *Store) RecordShiftStart(ctx context.Context, sh *pools.Shift) error {
	e, err := pools.ShiftStartEntry(ctx, sh)
	if err != nil {
		return err
	}
	return s.recordShiftOnce(ctx, shiftStartBucket, &e, pools.ShiftEvent(sh, pools.ShiftEventStarted, sh.StartsAt, pools.ActorClock))
}

// recordShiftOnce appends e and adds ev unless bucket already holds the
// shift's id: the first report writes, the others find it.
func (s *Store) recordShiftOnce(ctx context.Context, bucket []byte, e *pools.AuditEntry, ev pools.Event) error {
	return s.update(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucket)
		if b.Get([]byte(e.ObjectID)) != nil {
			return nil
		}
		if err := b.Put([]byte(e.ObjectID), []byte{1}); err != nil {
			return err
		}
		if err := appendAudit(tx, e); err != nil {
			return err
		}
		_, err := addEvent(tx, &ev, "")
		return err
	})
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
