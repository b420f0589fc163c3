package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/glb-dns/glb/pools"
)

const tsigColumns = "name, algorithm, secret, grants, created_on"

func scanTSIGKey(r pgx.Row) (pools.TSIGKey, error) {
	var k pools.TSIGKey
	var grants []byte
	if err := r.Scan(&k.Name, &k.Algorithm, &k.Secret, &grants, &k.CreatedOn); err != nil {
		return k, err
	}
	k.CreatedOn = k.CreatedOn.UTC()
	if err := json.Unmarshal(grants, &k.Grants); err != nil {
		return k, fmt.Errorf("decode TSIG key %q grants: %w", k.Name, err)
	}
	return k, nil
}

// CreateTSIGKey stores a key, bumps the revision and audits it, in one
// transaction.
func (s *Store) CreateTSIGKey(ctx context.Context, k pools.TSIGKey) (pools.TSIGKey, error) {
	now := s.now()
	if err := k.Prepare(now); err != nil {
		return pools.TSIGKey{}, err
	}
	if k.Secret == "" {
		return pools.TSIGKey{}, fmt.Errorf("TSIG key %q: no secret", k.Name)
	}
	grants, err := json.Marshal(k.Grants)
	if err != nil {
		return pools.TSIGKey{}, err
	}
	err = s.revisioned(ctx, pools.ActionCreate, pools.KindTSIGKey, k.Name, now, func(t *txn) (any, any, error) {
		if err := k.CheckZones(t); err != nil {
			return nil, nil, err
		}
		tag, err := t.tx.Exec(ctx, `insert into tsig_keys (`+tsigColumns+`) values ($1, $2, $3, $4, $5)
			on conflict (name) do nothing`, k.Name, k.Algorithm, k.Secret, grants, k.CreatedOn)
		return nil, k, inserted(tag, err, "TSIG key", k.Name)
	})
	if err != nil {
		return pools.TSIGKey{}, err
	}
	return k, nil
}

// TSIGKeys lists every key by name, without secrets.
func (s *Store) TSIGKeys(ctx context.Context) ([]pools.TSIGKey, error) {
	withoutSecret := func(r pgx.CollectableRow) (pools.TSIGKey, error) {
		k, err := scanTSIGKey(r)
		k.Secret = ""
		return k, err
	}
	return selectAll(s, ctx, withoutSecret, "select "+tsigColumns+" from tsig_keys order by name")
}

// TSIGKey returns the key named name, with its secret.
func (s *Store) TSIGKey(ctx context.Context, name string) (pools.TSIGKey, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	k, err := scanTSIGKey(s.pool.QueryRow(ctx, "select "+tsigColumns+" from tsig_keys where name = $1", name))
	return k, mapError(missing(err, "TSIG key", name))
}

// DeleteTSIGKey removes a key, bumps the revision and audits it.
func (s *Store) DeleteTSIGKey(ctx context.Context, name string) error {
	return s.revisioned(ctx, pools.ActionDelete, pools.KindTSIGKey, name, s.now(), func(t *txn) (any, any, error) {
		old, err := scanTSIGKey(t.tx.QueryRow(ctx, "delete from tsig_keys where name = $1 returning "+tsigColumns, name))
		return old, nil, missing(err, "TSIG key", name)
	})
}
