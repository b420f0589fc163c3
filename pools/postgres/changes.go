package postgres

import (
	"context"
	"maps"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/glb-dns/glb/pools"
)

// Changes reports the objects written or deleted after revision since,
// from the change log that migration 003's triggers keep.
func (s *Store) Changes(ctx context.Context, since int64) (*pools.ChangeSet, error) {
	var cs *pools.ChangeSet
	var gap error // outside the transaction's errors: not a storage failure
	err := s.follow(ctx, func(tx pgx.Tx) error {
		var rev, horizon int64
		err := tx.QueryRow(ctx, "select r.revision, h.revision from glb_revision r, config_changes_horizon h").Scan(&rev, &horizon)
		if err != nil {
			return err
		}
		if gap = pools.ChangeGap(since, horizon, rev); gap != nil {
			return nil
		}
		cs = &pools.ChangeSet{Since: since, Revision: rev}
		rows, err := tx.Query(ctx, `select kind, id, max(revision) from config_changes
			where revision > $1::int8 group by kind, id order by 3, 1, 2`, since)
		if err != nil {
			return err
		}
		cs.Changes, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (pools.ObjectChange, error) {
			var c pools.ObjectChange
			err := r.Scan(&c.Kind, &c.ID, &c.Revision)
			return c, err
		})
		if err != nil {
			return err
		}
		ids := map[pools.Kind][]string{}
		for _, c := range cs.Changes {
			ids[c.Kind] = append(ids[c.Kind], c.ID)
		}
		docs := map[pools.Kind]map[string]pools.Object{}
		for k, list := range ids {
			tbl, err := table(k)
			if err != nil {
				return err
			}
			rows, err := tx.Query(ctx, "select id, doc from "+tbl+" where id = any($1::text[])", list)
			if err != nil {
				return err
			}
			docs[k] = map[string]pools.Object{}
			var id string
			var doc []byte
			_, err = pgx.ForEachRow(rows, []any{&id, &doc}, func() error {
				o, err := decode(k, doc)
				docs[k][id] = o
				return err
			})
			if err != nil {
				return err
			}
			if k == pools.KindZone {
				if err := attachObjects(ctx, tx, slices.Collect(maps.Values(docs[k]))); err != nil {
					return err
				}
			}
		}
		for i := range cs.Changes {
			c := &cs.Changes[i]
			c.Object = docs[c.Kind][c.ID]
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if gap != nil {
		return nil, gap
	}
	return cs, nil
}
