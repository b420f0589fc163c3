package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/glb-dns/glb/pools"
)

// CookieSecret returns the cluster's cookie secret, made or rotated under
// a row lock so that nodes starting or rotating at once agree on one.
func (s *Store) CookieSecret(ctx context.Context, rotateAfter time.Duration) (pools.CookieSecret, error) {
	var out pools.CookieSecret
	err := s.write(ctx, func(t *txn) error {
		// The insert takes the lock when the row is new; the select when
		// it exists.
		if _, err := t.tx.Exec(t.ctx, `insert into glb_cookie_secret (current, rotated_on)
			values ($1, $2) on conflict (singleton) do nothing`, pools.NewCookieSecret(), s.now()); err != nil {
			return err
		}
		var cur pools.CookieSecret
		err := t.tx.QueryRow(t.ctx, `select current, previous, rotated_on from glb_cookie_secret for update`).
			Scan(&cur.Current, &cur.Previous, &cur.RotatedOn)
		if errors.Is(err, pgx.ErrNoRows) {
			return errors.New("cookie secret row missing after insert")
		}
		if err != nil {
			return err
		}
		next, changed := pools.NextCookieSecret(cur, s.now(), rotateAfter)
		if changed {
			if _, err := t.tx.Exec(t.ctx, `update glb_cookie_secret set current = $1, previous = $2, rotated_on = $3`,
				next.Current, next.Previous, next.RotatedOn); err != nil {
				return err
			}
		}
		out = next
		return nil
	})
	return out, err
}
