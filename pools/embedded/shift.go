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
	return s.update(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(shiftExpiryBucket)
		if b.Get([]byte(sh.ID)) != nil {
			return nil
		}
		if err := b.Put([]byte(sh.ID), []byte{1}); err != nil {
			return err
		}
		if err := appendAudit(tx, &e); err != nil {
			return err
		}
		ev := pools.ShiftEvent(sh, pools.ShiftEventExpired, sh.ExpiresAt, pools.ActorClock)
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
