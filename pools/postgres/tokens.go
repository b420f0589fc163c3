package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/glb-dns/glb/pools"
)

const tokenColumns = "name, hash, scopes, created_on, expires_on, last_used_on, zones"

func scanToken(r pgx.Row) (pools.Token, error) {
	var t pools.Token
	var scopes []string
	err := r.Scan(&t.Name, &t.Hash, &scopes, &t.CreatedOn, &t.ExpiresOn, &t.LastUsed, &t.Zones)
	if len(t.Zones) == 0 {
		t.Zones = nil
	}
	for _, s := range scopes {
		t.Scopes = append(t.Scopes, pools.Scope(s))
	}
	t.CreatedOn = t.CreatedOn.UTC()
	for _, p := range []*time.Time{t.ExpiresOn, t.LastUsed} {
		if p != nil {
			*p = p.UTC()
		}
	}
	return t, err
}

// CreateToken stores a token, bumps the revision and audits it, in one
// transaction.
func (s *Store) CreateToken(ctx context.Context, tok pools.Token) (pools.Token, error) {
	now := s.now()
	if err := tok.Prepare(now); err != nil {
		return pools.Token{}, err
	}
	scopes := make([]string, len(tok.Scopes))
	for i, sc := range tok.Scopes {
		scopes[i] = string(sc)
	}
	err := s.revisioned(ctx, pools.ActionCreate, pools.KindToken, tok.Name, now, func(t *txn) (any, any, error) {
		tag, err := t.tx.Exec(ctx, `insert into api_tokens (`+tokenColumns+`) values ($1, $2, $3, $4, $5, null, $6)
			on conflict (name) do nothing`, tok.Name, tok.Hash, scopes, tok.CreatedOn, tok.ExpiresOn, zonesOf(tok))
		return nil, tok, inserted(tag, err, "token", tok.Name)
	})
	if err != nil {
		return pools.Token{}, err
	}
	return tok, nil
}

// Tokens lists every token by name.
func (s *Store) Tokens(ctx context.Context) ([]pools.Token, error) {
	return selectAll(s, ctx, func(r pgx.CollectableRow) (pools.Token, error) { return scanToken(r) },
		"select "+tokenColumns+" from api_tokens order by name")
}

func (s *Store) tokenWhere(ctx context.Context, cond string, arg any, what string) (pools.Token, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	t, err := scanToken(s.pool.QueryRow(ctx, "select "+tokenColumns+" from api_tokens where "+cond, arg))
	if errors.Is(err, pgx.ErrNoRows) {
		return pools.Token{}, fmt.Errorf("token %s: %w", what, pools.ErrNotFound)
	}
	return t, mapError(err)
}

// Token returns the token named name.
func (s *Store) Token(ctx context.Context, name string) (pools.Token, error) {
	return s.tokenWhere(ctx, "name = $1", name, fmt.Sprintf("%q", name))
}

// TokenByHash returns the token whose secret hashes to hash.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (pools.Token, error) {
	return s.tokenWhere(ctx, "hash = $1", hash, "with that secret")
}

// DeleteToken revokes a token, bumps the revision and audits it.
func (s *Store) DeleteToken(ctx context.Context, name string) error {
	return s.revisioned(ctx, pools.ActionDelete, pools.KindToken, name, s.now(), func(t *txn) (any, any, error) {
		old, err := scanToken(t.tx.QueryRow(ctx, "delete from api_tokens where name = $1 returning "+tokenColumns, name))
		return old, nil, missing(err, "token", name)
	})
}

// TouchToken records a use; it is not a configuration change, so it is
// neither revisioned nor audited.
func (s *Store) TouchToken(ctx context.Context, name string, at time.Time) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	_, err := s.pool.Exec(ctx, "update api_tokens set last_used_on = $2 where name = $1", name, pools.StoreTime(at))
	return mapError(err)
}

// zonesOf is the zones column of t: never null.
func zonesOf(t pools.Token) []string {
	if t.Zones == nil {
		return []string{}
	}
	return t.Zones
}
