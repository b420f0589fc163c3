package embedded

import (
	"context"
	"strconv"

	"go.etcd.io/bbolt"

	"github.com/glb-dns/glb/pools"
)

// writeOne runs one audited write of an object of kind k, which fn
// returns with the global revision, and wakes the watchers.
func writeOne[T pools.Object](s *Store, ctx context.Context, k pools.Kind, fn func(t *pools.Recorder) (T, int64, error)) (T, error) {
	var out T
	rev, err := s.audited(ctx, k, func(t *pools.Recorder) (string, int64, error) {
		var rev int64
		var err error
		if out, rev, err = fn(t); err != nil {
			return "", 0, err
		}
		return out.ObjectMeta().ID, rev, nil
	})
	if err != nil {
		var none T
		return none, err
	}
	s.watchers.Notify(pools.Change{Revision: rev})
	return out, nil
}

// listAll reads every object of kind k, of type T, in creation order.
func listAll[T any](tx *bbolt.Tx, k pools.Kind) ([]T, error) {
	var all []T
	err := each(tx, k, func(o pools.Object) { all = append(all, *any(o).(*T)) })
	return all, err
}

// ChangeRollout applies an event to a rollout; see
// pools.ChangeRolloutAudited.
func (s *Store) ChangeRollout(ctx context.Context, id string, ifRevision int64, action, reason string) (*pools.Rollout, error) {
	var out *pools.Rollout
	rev, err := s.auditedAll(ctx, func(rec *pools.Recorder) ([]pools.AuditEntry, int64, error) {
		r, es, rev, err := pools.ChangeRolloutAudited(ctx, rec, id, ifRevision, action, reason, s.now())
		out = r
		return es, rev, err
	})
	if err != nil {
		return nil, err
	}
	s.watchers.Notify(pools.Change{Revision: rev})
	return out, nil
}

// StartRollout stores r; see pools.StartRolloutIn.
func (s *Store) StartRollout(ctx context.Context, r *pools.Rollout, guard func(pools.Object) error) (*pools.Rollout, error) {
	return writeOne(s, ctx, pools.KindRollout, func(t *pools.Recorder) (*pools.Rollout, int64, error) {
		list := func() ([]pools.Rollout, error) { return listAll[pools.Rollout](t.Tx.(txn).tx, pools.KindRollout) }
		return pools.StartRolloutIn(t, r, guard, list, s.now())
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
