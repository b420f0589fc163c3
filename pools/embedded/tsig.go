package embedded

import (
	"context"
	"encoding/json"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/glb-dns/glb/pools"
)

// tsigBucket: key name → stored key (with its secret).
var tsigBucket = []byte("tsig")

// storedTSIGKey is a key with its secret, which pools.TSIGKey never
// marshals.
type storedTSIGKey struct {
	pools.TSIGKey
	Secret string `json:"secret"`
}

func getTSIGKey(tx *bbolt.Tx, name string) (pools.TSIGKey, error) {
	v := tx.Bucket(tsigBucket).Get([]byte(name))
	if v == nil {
		return pools.TSIGKey{}, fmt.Errorf("TSIG key %q: %w", name, pools.ErrNotFound)
	}
	var st storedTSIGKey
	if err := json.Unmarshal(v, &st); err != nil {
		return pools.TSIGKey{}, fmt.Errorf("decode TSIG key %q: %w", name, err)
	}
	st.TSIGKey.Secret = st.Secret
	return st.TSIGKey, nil
}

// CreateTSIGKey stores a key, bumps the revision and audits it, in one
// transaction.
func (s *Store) CreateTSIGKey(ctx context.Context, k pools.TSIGKey) (pools.TSIGKey, error) {
	now := s.now()
	if err := k.Prepare(now); err != nil {
		return pools.TSIGKey{}, err
	}
	var rev int64
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		if tx.Bucket(tsigBucket).Get([]byte(k.Name)) != nil {
			return &pools.ValidationError{Errors: []pools.FieldError{{Path: "name", Message: fmt.Sprintf("a TSIG key named %q already exists", k.Name)}}}
		}
		if k.Secret == "" {
			return fmt.Errorf("TSIG key %q: no secret", k.Name)
		}
		t := txn{tx}
		var err error
		if rev, err = t.BumpRevision(); err != nil {
			return err
		}
		if err := k.CheckZones(t); err != nil {
			return err
		}
		v, err := json.Marshal(storedTSIGKey{TSIGKey: k, Secret: k.Secret})
		if err != nil {
			return err
		}
		if err := tx.Bucket(tsigBucket).Put([]byte(k.Name), v); err != nil {
			return err
		}
		e, err := pools.NewAuditEntry(ctx, rev, pools.ActionCreate, pools.KindTSIGKey, k.Name, nil, k, now)
		if err != nil {
			return err
		}
		return appendAudit(tx, &e)
	})
	if err != nil {
		return pools.TSIGKey{}, err
	}
	s.watchers.Notify(pools.Change{Revision: rev})
	return k, nil
}

// TSIGKeys lists every key by name, without secrets.
func (s *Store) TSIGKeys(ctx context.Context) ([]pools.TSIGKey, error) {
	out := []pools.TSIGKey{}
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		return tx.Bucket(tsigBucket).ForEach(func(k, _ []byte) error {
			key, err := getTSIGKey(tx, string(k))
			key.Secret = ""
			out = append(out, key)
			return err
		})
	})
	return out, err
}

// TSIGKey returns the key named name, with its secret.
func (s *Store) TSIGKey(ctx context.Context, name string) (pools.TSIGKey, error) {
	var k pools.TSIGKey
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		var err error
		k, err = getTSIGKey(tx, name)
		return err
	})
	return k, err
}

// DeleteTSIGKey removes a key, bumps the revision and audits it.
func (s *Store) DeleteTSIGKey(ctx context.Context, name string) error {
	var rev int64
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		old, err := getTSIGKey(tx, name)
		if err != nil {
			return err
		}
		if rev, err = (txn{tx}).BumpRevision(); err != nil {
			return err
		}
		if err := tx.Bucket(tsigBucket).Delete([]byte(name)); err != nil {
			return err
		}
		e, err := pools.NewAuditEntry(ctx, rev, pools.ActionDelete, pools.KindTSIGKey, name, old, nil, s.now())
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
