package embedded

import (
	"context"
	"fmt"
	"time"

	"go.etcd.io/bbolt"

	"github.com/glb-dns/glb/pools"
)

// storedToken is a token with its hash, which pools.Token never marshals.
type storedToken struct {
	pools.Token
	Hash []byte `json:"hash"`
}

func getToken(tx *bbolt.Tx, name string) (pools.Token, error) {
	var st storedToken
	if err := getJSON(tx.Bucket(tokenBucket), "token", name, &st); err != nil {
		return pools.Token{}, err
	}
	st.Token.Hash = st.Hash
	return st.Token, nil
}

func putToken(tx *bbolt.Tx, t pools.Token) error {
	return putJSON(tx.Bucket(tokenBucket), []byte(t.Name), storedToken{Token: t, Hash: t.Hash})
}

// CreateToken stores a token, bumps the revision and audits it, in one
// transaction.
func (s *Store) CreateToken(ctx context.Context, tok pools.Token) (pools.Token, error) {
	now := s.now()
	if err := tok.Prepare(now); err != nil {
		return pools.Token{}, err
	}
	err := s.revisioned(ctx, pools.ActionCreate, pools.KindToken, tok.Name, now, func(tx *bbolt.Tx) (any, any, error) {
		if tx.Bucket(tokenBucket).Get([]byte(tok.Name)) != nil {
			return nil, nil, pools.NameTaken("token", tok.Name)
		}
		if len(tok.Hash) != 32 || tx.Bucket(tokenHashBucket).Get(tok.Hash) != nil {
			return nil, nil, fmt.Errorf("token %q: the secret's hash is missing or already in use", tok.Name)
		}
		if err := putToken(tx, tok); err != nil {
			return nil, nil, err
		}
		return nil, tok, tx.Bucket(tokenHashBucket).Put(tok.Hash, []byte(tok.Name))
	})
	if err != nil {
		return pools.Token{}, err
	}
	return tok, nil
}

// Tokens lists every token by name.
func (s *Store) Tokens(ctx context.Context) ([]pools.Token, error) {
	return list(s, ctx, tokenBucket, getToken)
}

// Token returns the token named name.
func (s *Store) Token(ctx context.Context, name string) (pools.Token, error) {
	return read(s, ctx, func(tx *bbolt.Tx) (pools.Token, error) { return getToken(tx, name) })
}

// TokenByHash returns the token whose secret hashes to hash.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (pools.Token, error) {
	return read(s, ctx, func(tx *bbolt.Tx) (pools.Token, error) {
		name := tx.Bucket(tokenHashBucket).Get(hash)
		if name == nil {
			return pools.Token{}, fmt.Errorf("token with that secret: %w", pools.ErrNotFound)
		}
		return getToken(tx, string(name))
	})
}

// DeleteToken revokes a token, bumps the revision and audits it.
func (s *Store) DeleteToken(ctx context.Context, name string) error {
	return s.revisioned(ctx, pools.ActionDelete, pools.KindToken, name, s.now(), func(tx *bbolt.Tx) (any, any, error) {
		old, err := getToken(tx, name)
		if err != nil {
			return nil, nil, err
		}
		if err := tx.Bucket(tokenBucket).Delete([]byte(name)); err != nil {
			return nil, nil, err
		}
		return old, nil, tx.Bucket(tokenHashBucket).Delete(old.Hash)
	})
}

// TouchToken records a use; it is not a configuration change, so it is
// neither revisioned nor audited.
func (s *Store) TouchToken(ctx context.Context, name string, at time.Time) error {
	return s.update(ctx, func(tx *bbolt.Tx) error {
		t, err := getToken(tx, name)
		if err != nil {
			return err
		}
		at = pools.StoreTime(at)
		t.LastUsed = &at
		return putToken(tx, t)
	})
}
