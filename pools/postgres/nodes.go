package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/glb-dns/glb/pools"
)

// The fleet lives in glb_nodes (migration 019), one JSON record per node.

func readNode(ctx context.Context, tx pgx.Tx, name string, lock bool) (pools.NodeRecord, bool, error) {
	q := "select doc from glb_nodes where name = $1"
	if lock {
		q += " for update"
	}
	var doc []byte
	err := tx.QueryRow(ctx, q, name).Scan(&doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return pools.NodeRecord{}, false, nil
	}
	if err != nil {
		return pools.NodeRecord{}, false, err
	}
	r, err := pools.DecodeNode(doc)
	if err != nil {
		return r, false, fmt.Errorf("decode node %q: %w", name, err)
	}
	return r, true, nil
}

func writeNode(ctx context.Context, tx pgx.Tx, r *pools.NodeRecord) error {
	doc, err := pools.EncodeNode(r)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `insert into glb_nodes (name, doc) values ($1, $2::jsonb)
		on conflict (name) do update set doc = excluded.doc`, r.Status.Name, string(doc))
	return err
}

// ReportNode records a node's status; see pools.NodeStore.
func (s *Store) ReportNode(ctx context.Context, st pools.NodeStatus) (*pools.NodeDrain, error) {
	if st.Name == "" {
		return nil, &pools.ValidationError{Errors: []pools.FieldError{{Path: "name", Message: "required"}}}
	}
	var drain *pools.NodeDrain
	err := s.write(ctx, func(t *txn) error {
		var rev int64
		if err := t.tx.QueryRow(t.ctx, "select revision from glb_revision").Scan(&rev); err != nil {
			return err
		}
		r, _, err := readNode(t.ctx, t.tx, st.Name, true)
		if err != nil {
			return err
		}
		pools.ReportNodeIn(&r, st, rev, s.now())
		drain = r.Drain
		return writeNode(t.ctx, t.tx, &r)
	})
	return drain, err
}

// Nodes returns every node, ordered by name.
func (s *Store) Nodes(ctx context.Context) (pools.NodeList, error) {
	out := pools.NodeList{Items: []pools.NodeRecord{}}
	err := s.read(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, "select revision from glb_revision").Scan(&out.Revision); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, "select name, doc from glb_nodes order by name")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var name string
			var doc []byte
			if err := rows.Scan(&name, &doc); err != nil {
				return err
			}
			r, err := pools.DecodeNode(doc)
			if err != nil {
				return fmt.Errorf("decode node %q: %w", name, err)
			}
			out.Items = append(out.Items, r)
		}
		return rows.Err()
	})
	return out, err
}

// DrainNode asks a node to drain or to serve again, audited.
func (s *Store) DrainNode(ctx context.Context, name string, d *pools.NodeDrain) (pools.NodeRecord, error) {
	var out pools.NodeRecord
	err := s.write(ctx, func(t *txn) error {
		r, ok, err := readNode(t.ctx, t.tx, name, true)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("node %q: %w", name, pools.ErrNotFound)
		}
		e, err := pools.DrainAudit(ctx, name, r.Drain, d, s.now())
		if err != nil {
			return err
		}
		r.Drain = d
		if err := writeNode(t.ctx, t.tx, &r); err != nil {
			return err
		}
		out = r
		// On commit: the node reads its drain at once, not at its next
		// report.
		if _, err := t.tx.Exec(t.ctx, "select pg_notify('"+NodesChannel+"', $1::text)", name); err != nil {
			return err
		}
		return t.audit(&e)
	})
	return out, err
}
