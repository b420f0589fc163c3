package embedded

import (
	"context"
	"encoding/json"

	"go.etcd.io/bbolt"

	"github.com/glb-dns/glb/pools"
)

// SafetyRules returns the global safety rules.
func (s *Store) SafetyRules(ctx context.Context) (pools.SafetyRules, error) {
	var out pools.SafetyRules
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		var err error
		out, err = pools.DecodeSafetyRules(tx.Bucket(metaBucket).Get(safetyRulesKey))
		return err
	})
	return out, err
}

// PutSafetyRules replaces the global safety rules; see
// pools.PutSafetyRulesIn.
func (s *Store) PutSafetyRules(ctx context.Context, r pools.SafetyRules, ifRevision int64) (pools.SafetyRules, error) {
	var out pools.SafetyRules
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		meta := tx.Bucket(metaBucket)
		cur, err := pools.DecodeSafetyRules(meta.Get(safetyRulesKey))
		if err != nil {
			return err
		}
		next, e, err := pools.PutSafetyRulesIn(ctx, txn{tx}, cur, r, ifRevision, s.now())
		if err != nil {
			return err
		}
		v, err := json.Marshal(next)
		if err != nil {
			return err
		}
		if err := meta.Put(safetyRulesKey, v); err != nil {
			return err
		}
		out = next
		return appendAudit(tx, &e)
	})
	if err != nil {
		return pools.SafetyRules{}, err
	}
	s.watchers.Notify(pools.Change{Revision: out.Revision})
	return out, nil
}
