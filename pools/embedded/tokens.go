package embedded

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.etcd.io/bbolt"

	"github.com/glb-dns/glb/pools"
)

// Tokens: name → stored token (with its hash), and hash → name.
var (
	tokenBucket     = []byte("tokens")
	tokenHashBucket = []byte("tokens.hash")
)

// storedToken is a token with its hash, which pools.Token never marshals.
type storedToken struct {
	pools.Token
	Hash []byte `json:"hash"`
}

func getToken(tx *bbolt.Tx, name string) (pools.Token, error) {
	v := tx.Bucket(tokenBucket).Get([]byte(name))
	if v == nil {
		return pools.Token{}, fmt.Errorf("token %q: %w", name, pools.ErrNotFound)
	}
	var st storedToken
	if err := json.Unmarshal(v, &st); err != nil {
		return pools.Token{}, fmt.Errorf("decode token %q: %w", name, err)
	}
	st.Token.Hash = st.Hash
	return st.Token, nil
}

func putToken(tx *bbolt.Tx, t pools.Token) error {
	v, err := json.Marshal(storedToken{Token: t, Hash: t.Hash})
	if err != nil {
		return err
	}
	return tx.Bucket(tokenBucket).Put([]byte(t.Name), v)
}

// CreateToken stores a token, bumps the revision and audits it, in one
// transaction.
func (s *Store) CreateToken(ctx context.Context, tok pools.Token) (pools.Token, error) {
	now := s.now()
	if err := tok.Prepare(now); err != nil {
		return pools.Token{}, err
	}
	var rev int64
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		if tx.Bucket(tokenBucket).Get([]byte(tok.Name)) != nil {
			return &pools.ValidationError{Errors: []pools.FieldError{{Path: "name", Message: fmt.Sprintf("a token named %q already exists", tok.Name)}}}
		}
		if len(tok.Hash) != 32 || tx.Bucket(tokenHashBucket).Get(tok.Hash) != nil {
			return fmt.Errorf("token %q: the secret's hash is missing or already in use", tok.Name)
		}
		var err error
		if rev, err = (txn{tx}).BumpRevision(); err != nil {
			return err
		}
		if err := putToken(tx, tok); err != nil {
			return err
		}
		if err := tx.Bucket(tokenHashBucket).Put(tok.Hash, []byte(tok.Name)); err != nil {
			return err
		}
		e, err := pools.NewAuditEntry(ctx, rev, pools.ActionCreate, pools.KindToken, tok.Name, nil, tok, now)
		if err != nil {
			return err
		}
		return appendAudit(tx, &e)
	})
	if err != nil {
		return pools.Token{}, err
	}
	s.watchers.Notify(pools.Change{Revision: rev})
	return tok, nil
}

// Tokens lists every token by name.
func (s *Store) Tokens(ctx context.Context) ([]pools.Token, error) {
	out := []pools.Token{}
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		return tx.Bucket(tokenBucket).ForEach(func(k, _ []byte) error {
			t, err := getToken(tx, string(k))
			out = append(out, t)
			return err
		})
	})
	return out, err
}

// Token returns the token named name.
func (s *Store) Token(ctx context.Context, name string) (pools.Token, error) {
	var t pools.Token
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		var err error
		t, err = getToken(tx, name)
		return err
	})
	return t, err
}

// TokenByHash returns the token whose secret hashes to hash.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (pools.Token, error) {
	var t pools.Token
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		name := tx.Bucket(tokenHashBucket).Get(hash)
		if name == nil {
			return fmt.Errorf("token with that secret: %w", pools.ErrNotFound)
		}
		var err error
		t, err = getToken(tx, string(name))
		return err
	})
	return t, err
}

// DeleteToken revokes a token, bumps the revision and audits it.
func (s *Store) DeleteToken(ctx context.Context, name string) error {
	var rev int64
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		old, err := getToken(tx, name)
		if err != nil {
			return err
		}
		if rev, err = (txn{tx}).BumpRevision(); err != nil {
			return err
		}
		if err := tx.Bucket(tokenBucket).Delete([]byte(name)); err != nil {
			return err
		}
		if err := tx.Bucket(tokenHashBucket).Delete(old.Hash); err != nil {
			return err
		}
		e, err := pools.NewAuditEntry(ctx, rev, pools.ActionDelete, pools.KindToken, name, old, nil, s.now())
		if err != nil {
			return err
		}
		return appendAudit(tx, &e)
	})
	if err != nil {
		return err
	}
	s.watchers.Notify(pools.Change{Revision: rev})
	return nil
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
