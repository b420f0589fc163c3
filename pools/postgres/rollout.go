package postgres

import (
	"context"

	"github.com/glb-dns/glb/pools"
)

// writeOne runs one audited write of an object of kind k, which fn
// returns with the global revision.
func writeOne[T pools.Object](s *Store, ctx context.Context, k pools.Kind, fn func(t *pools.Recorder) (T, int64, error)) (T, error) {
	var out T
	err := s.audited(ctx, k, func(t *pools.Recorder) (string, int64, error) {
		var rev int64
		var err error
		if out, rev, err = fn(t); err != nil {
			return "", 0, err
		}
		return out.ObjectMeta().ID, rev, nil
	})
	return out, err
}

// StartRollout stores r; see pools.StartRolloutIn.
func (s *Store) StartRollout(ctx context.Context, r *pools.Rollout, guard func(pools.Object) error) (*pools.Rollout, error) {
	return writeOne(s, ctx, pools.KindRollout, func(t *pools.Recorder) (*pools.Rollout, int64, error) {
		tx := t.Tx.(*txn)
		list := func() ([]pools.Rollout, error) { return readAll[pools.Rollout](tx.ctx, tx.tx, pools.KindRollout) }
		return pools.StartRolloutIn(t, r, guard, list, s.now())
	})
}

// ChangeRollout applies an event to a rollout; see
// pools.ChangeRolloutAudited.
func (s *Store) ChangeRollout(ctx context.Context, id string, ifRevision int64, action, reason string) (*pools.Rollout, error) {
	var out *pools.Rollout
	_, err := s.auditedAll(ctx, func(rec *pools.Recorder) ([]pools.AuditEntry, int64, error) {
		r, es, rev, err := pools.ChangeRolloutAudited(ctx, rec, id, ifRevision, action, reason, s.now())
		out = r
		return es, rev, err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RecordRolloutStep audits step k of r once: a partial unique index keeps
// a second node's entry out.
func (s *Store) RecordRolloutStep(ctx context.Context, r *pools.Rollout, k int) error {
	e, err := pools.RolloutStepEntry(ctx, r, k)
	if err != nil {
		return err
	}
	return s.write(ctx, func(t *txn) error {
		_, err := t.tx.Exec(t.ctx, `insert into audit_log (revision, at, actor, method, action, kind, object_id, before, after)
			values ($1, $2, $3, $4, $5, $6, $7, null, $8::jsonb)
			on conflict (object_id, (after->>'current_step')) where kind = 'rollouts' and actor = 'clock' and action = 'update' and before is null do nothing`,
			e.Revision, e.Time, e.Actor, e.Method, e.Action, string(e.Kind), e.ObjectID, string(e.After))
		return err
	})
}
