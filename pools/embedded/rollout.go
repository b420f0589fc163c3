package embedded

import (
	"context"
	"strconv"

	"go.etcd.io/bbolt"

	"github.com/glb-dns/glb/pools"
)

// rolloutStepBucket holds "id/step" for the rollout steps audited.
var rolloutStepBucket = []byte("audit.rollout_step")

// rolloutWrite runs one audited rollout write and wakes the watchers.
func (s *Store) rolloutWrite(ctx context.Context, fn func(t *pools.Recorder) (*pools.Rollout, int64, error)) (*pools.Rollout, error) {
	var out *pools.Rollout
	rev, err := s.audited(ctx, pools.KindRollout, func(t *pools.Recorder) (string, int64, error) {
		var rev int64
		var err error
		if out, rev, err = fn(t); err != nil {
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

// StartRollout stores r; see pools.StartRolloutIn.
func (s *Store) StartRollout(ctx context.Context, r *pools.Rollout, guard func(*pools.Pool) error) (*pools.Rollout, error) {
	return s.rolloutWrite(ctx, func(t *pools.Recorder) (*pools.Rollout, int64, error) {
		list := func() ([]pools.Rollout, error) {
			var all []pools.Rollout
			err := each(t.Tx.(txn).tx, pools.KindRollout, func(o pools.Object) { all = append(all, *o.(*pools.Rollout)) })
			return all, err
		}
		return pools.StartRolloutIn(t, r, guard, list, s.now())
	})
}

// ChangeRollout applies an event to a rollout; see pools.ChangeRolloutIn.
func (s *Store) ChangeRollout(ctx context.Context, id string, ifRevision int64, action, reason string) (*pools.Rollout, error) {
	return s.rolloutWrite(ctx, func(t *pools.Recorder) (*pools.Rollout, int64, error) {
		return pools.ChangeRolloutIn(t, id, ifRevision, action, reason, s.now())
	})
}

// RecordRolloutStep audits step k of r once.
func (s *Store) RecordRolloutStep(ctx context.Context, r *pools.Rollout, k int) error {
	e, err := pools.RolloutStepEntry(ctx, r, k)
	if err != nil {
		return err
	}
	key := []byte(r.ID + "/" + strconv.Itoa(k))
	return s.update(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(rolloutStepBucket)
		if b.Get(key) != nil {
			return nil
		}
		if err := b.Put(key, []byte{1}); err != nil {
			return err
		}
		return appendAudit(tx, &e)
	})
}
