package postgres

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/glb-dns/glb/pools"
)

func readSafetyRules(ctx context.Context, tx pgx.Tx, lock bool) (pools.SafetyRules, error) {
	q := "select doc from glb_safety_rules"
	if lock {
		q += " for update"
	}
	var doc []byte
	err := tx.QueryRow(ctx, q).Scan(&doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return pools.SafetyRules{}, nil
	}
	if err != nil {
		return pools.SafetyRules{}, err
	}
	return pools.DecodeSafetyRules(doc)
}

// SafetyRules returns the global safety rules.
func (s *Store) SafetyRules(ctx context.Context) (pools.SafetyRules, error) {
	var out pools.SafetyRules
	err := s.read(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = readSafetyRules(ctx, tx, false)
		return err
	})
	return out, err
}

// PutSafetyRules replaces the global safety rules; see
// pools.PutSafetyRulesIn. The revision bump comes first, so writers
// serialise before the precondition is checked.
func (s *Store) PutSafetyRules(ctx context.Context, r pools.SafetyRules, ifRevision int64) (pools.SafetyRules, error) {
	var out pools.SafetyRules
	err := s.write(ctx, func(t *txn) error {
		if err := r.Validate(); err != nil {
			return err
		}
		if _, err := t.tx.Exec(t.ctx, "select revision from glb_revision for update"); err != nil {
			return err
		}
		cur, err := readSafetyRules(t.ctx, t.tx, true)
		if err != nil {
			return err
		}
		next, e, err := pools.PutSafetyRulesIn(ctx, t, cur, r, ifRevision, s.now())
		if err != nil {
			return err
		}
		doc, err := json.Marshal(next)
		if err != nil {
			return err
		}
		if _, err := t.tx.Exec(t.ctx, `insert into glb_safety_rules (revision, doc) values ($1, $2::jsonb)
			on conflict (singleton) do update set revision = excluded.revision, doc = excluded.doc`, next.Revision, string(doc)); err != nil {
			return err
		}
		out = next
		return t.audit(&e)
	})
	return out, err
}
