package embedded

import (
	"context"
	"time"

	"go.etcd.io/bbolt"

	"github.com/glb-dns/glb/pools"
)

// shiftExpiryBucket holds the ids of shifts whose expiry is audited.
var shiftExpiryBucket = []byte("audit.shift_expiry")

// StartShift stores s unless guard refuses it; see pools.StartShiftIn.
func (s *Store) StartShift(ctx context.Context, sh *pools.Shift, guard func([]pools.Shift) error) (*pools.Shift, error) {
	var out *pools.Shift
	rev, err := s.audited(ctx, pools.KindShift, func(t *pools.Recorder) (string, int64, error) {
		tx := t.Tx.(txn).tx
		list := func() ([]pools.Shift, error) {
			var all []pools.Shift
			err := each(tx, pools.KindShift, func(o pools.Object) { all = append(all, *o.(*pools.Shift)) })
			return all, err
		}
		var rev int64
		var err error
		out, rev, err = pools.StartShiftIn(t, sh, guard, list, s.now())
		if err != nil {
			return "", 0, err
		}
		return out.ID, rev, nil
	})
	if err != nil {
		return nil, err
	}
	s.watchers.Notify(pools.Change{Revision: rev})
	return out, nil
}

// EndShift ends a shift early; see pools.EndShiftIn.
func (s *Store) EndShift(ctx context.Context, id string) (*pools.Shift, error) {
	var out *pools.Shift
	rev, err := s.audited(ctx, pools.KindShift, func(t *pools.Recorder) (string, int64, error) {
		var rev int64
		var err error
		out, rev, err = pools.EndShiftIn(t, id, s.now())
		return id, rev, err
	})
	if err != nil {
		return nil, err
	}
	s.watchers.Notify(pools.Change{Revision: rev})
	return out, nil
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
		var list []pools.Shift
		if err := each(tx, pools.KindShift, func(o pools.Object) { list = append(list, *o.(*pools.Shift)) }); err != nil {
			return err
		}
		var err error
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
