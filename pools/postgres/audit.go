package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/glb-dns/glb/pools"
)

// audited runs a write of one object with the rules over a recording
// transaction and appends its audit entry in the same transaction: a
// write that fails leaves no entry, and no entry is lost for a write that
// commits.
func (s *Store) audited(ctx context.Context, k pools.Kind, fn func(*pools.Recorder) (id string, rev int64, err error)) error {
	_, err := s.auditedAll(ctx, pools.OneEntry(ctx, k, s.now, fn))
	return err
}

// auditedAll runs a write over a recording transaction and appends the
// audit entries (and the events) it returns in the same transaction.
func (s *Store) auditedAll(ctx context.Context, fn func(*pools.Recorder) ([]pools.AuditEntry, int64, error)) (int64, error) {
	var rev int64
	err := s.write(ctx, func(t *txn) error {
		es, r, err := fn(pools.Recording(t))
		if err != nil {
			return err
		}
		rev = r
		for i := range es {
			if err := t.audit(&es[i]); err != nil {
				return err
			}
			if err := t.writeEvent(&es[i]); err != nil {
				return err
			}
		}
		return nil
	})
	return rev, err
}

// Restore writes a rollback in one transaction; see pools.RestoreIn.
func (s *Store) Restore(ctx context.Context, r *pools.Restore) (int64, error) {
	return s.auditedAll(ctx, func(rec *pools.Recorder) ([]pools.AuditEntry, int64, error) {
		tx := rec.Tx.(*txn)
		list := func() ([]pools.Rollout, error) { return readAll[pools.Rollout](tx.ctx, tx.tx, pools.KindRollout) }
		for _, w := range r.Writes {
			if err := pools.RefuseMoving(w.Object, list); err != nil {
				return nil, 0, err
			}
		}
		return pools.RestoreIn(ctx, rec, r, s.now())
	})
}

// revisioned runs a configuration write outside the object kinds (a token,
// a TSIG key) in one transaction, as every write is: the revision is
// bumped, fn changes the rows and returns the thing before and after (nil
// for none), and its audit entry (action on kind/id, at now) is written.
func (s *Store) revisioned(ctx context.Context, action string, k pools.Kind, id string, now time.Time, fn func(t *txn) (before, after any, err error)) error {
	return s.write(ctx, func(t *txn) error {
		rev, err := t.BumpRevision()
		if err != nil {
			return err
		}
		before, after, err := fn(t)
		if err != nil {
			return err
		}
		return t.auditChange(rev, action, k, id, before, after, now)
	})
}

// auditChange writes the audit entry of action on k/id (the thing before
// and after it, at now) at revision rev: 0 for a write that is not part
// of the configuration.
func (t *txn) auditChange(rev int64, action string, k pools.Kind, id string, before, after any, now time.Time) error {
	e, err := pools.NewAuditEntry(t.ctx, rev, action, k, id, before, after, now)
	if err != nil {
		return err
	}
	return t.audit(&e)
}

// inserted is the error of an insert … on conflict do nothing that
// inserted nothing: the name is taken.
func inserted(tag pgconn.CommandTag, err error, what, name string) error {
	if err == nil && tag.RowsAffected() == 0 {
		return pools.NameTaken(what, name)
	}
	return err
}

// missing is the error of a query for one row (a select, a delete …
// returning) that found none: what named name is not there.
func missing(err error, what, name string) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s %q: %w", what, name, pools.ErrNotFound)
	}
	return err
}

func (t *txn) audit(e *pools.AuditEntry) error {
	_, err := t.tx.Exec(t.ctx, `insert into audit_log (revision, at, actor, method, action, kind, object_id, before, after)
		values ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb)`,
		e.Revision, e.Time, e.Actor, e.Method, e.Action, string(e.Kind), e.ObjectID, string(e.Before), string(e.After))
	if err != nil {
		return fmt.Errorf("audit %s %s: %w", e.Kind.Singular(), e.ObjectID, err)
	}
	return nil
}

// Audit returns one page of entries matching f, newest first.
func (s *Store) Audit(ctx context.Context, f pools.AuditFilter, p pools.Page) (pools.AuditList, error) {
	var conds []string
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, fmt.Sprintf(cond, len(args)))
	}
	if f.Kind != "" {
		add("kind = $%d", string(f.Kind))
	}
	if len(f.Kinds) > 0 {
		kinds := make([]string, len(f.Kinds))
		for i, k := range f.Kinds {
			kinds[i] = string(k)
		}
		add("kind = any($%d::text[])", kinds)
	}
	if f.ObjectID != "" {
		add("object_id = $%d", f.ObjectID)
	}
	if f.Actor != "" {
		add("actor = $%d", f.Actor)
	}
	if !f.Since.IsZero() {
		add("at >= $%d", f.Since)
	}
	if !f.Until.IsZero() {
		add("at < $%d", f.Until)
	}
	where := ""
	if len(conds) > 0 {
		where = " where " + strings.Join(conds, " and ")
	}
	offset, limit := p.Bounds()
	res := pools.AuditList{Items: []pools.AuditEntry{}}
	err := s.read(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, "select count(*) from audit_log"+where, args...).Scan(&res.TotalCount); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, fmt.Sprintf(`select id, revision, at, actor, method, action, kind, object_id,
			coalesce(before, 'null'::jsonb)::text, coalesce(after, 'null'::jsonb)::text
			from audit_log%s order by id desc limit %d offset %d`, where, limit, offset), args...)
		if err != nil {
			return err
		}
		res.Items, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (pools.AuditEntry, error) {
			var e pools.AuditEntry
			var kind, before, after string
			err := r.Scan(&e.ID, &e.Revision, &e.Time, &e.Actor, &e.Method, &e.Action, &kind, &e.ObjectID, &before, &after)
			e.Kind, e.Before, e.After, e.Time = pools.Kind(kind), []byte(before), []byte(after), e.Time.UTC()
			return e, err
		})
		return err
	})
	return res, err
}

// RecordHealth records each transition that differs from the last state
// recorded for its origin. The state row is created (healthy) if missing
// and locked before it is compared, so that nodes reporting the same
// transition at once record it once.
func (s *Store) RecordHealth(ctx context.Context, at time.Time, ts []pools.HealthTransition) error {
	if len(ts) == 0 {
		return nil
	}
	// Rows are locked in one order on every node, so that two nodes
	// reporting the same origins cannot deadlock.
	ts = slices.Clone(ts)
	slices.SortFunc(ts, func(a, b pools.HealthTransition) int {
		return cmp.Or(cmp.Compare(a.Pool, b.Pool), cmp.Compare(a.Origin, b.Origin))
	})
	return s.write(ctx, func(t *txn) error {
		for _, h := range ts {
			_, err := t.tx.Exec(ctx, `insert into audit_health_state (pool, origin, healthy) values ($1, $2, true)
				on conflict do nothing`, h.Pool, h.Origin)
			if err != nil {
				return err
			}
			var was bool
			err = t.tx.QueryRow(ctx, `select healthy from audit_health_state where pool = $1 and origin = $2 for update`,
				h.Pool, h.Origin).Scan(&was)
			if err != nil {
				return err
			}
			if was == h.Healthy {
				continue
			}
			if _, err := t.tx.Exec(ctx, `update audit_health_state set healthy = $3 where pool = $1 and origin = $2`,
				h.Pool, h.Origin, h.Healthy); err != nil {
				return err
			}
			e, err := pools.HealthEntry(ctx, h, at)
			if err != nil {
				return err
			}
			if err := t.audit(&e); err != nil {
				return err
			}
		}
		return nil
	})
}

// PruneAudit deletes entries older than before.
func (s *Store) PruneAudit(ctx context.Context, before time.Time) (int64, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	tag, err := s.pool.Exec(ctx, "delete from audit_log where at < $1", before)
	if err != nil {
		return 0, mapError(err)
	}
	return tag.RowsAffected(), nil
}
