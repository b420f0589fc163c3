package embedded

import (
	"context"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/glb-dns/glb/pools"
)

// storedTSIGKey is a key with its secret, which pools.TSIGKey never
// marshals.
type storedTSIGKey struct {
	pools.TSIGKey
	Secret string `json:"secret"`
}

func getTSIGKey(tx *bbolt.Tx, name string) (pools.TSIGKey, error) {
	var st storedTSIGKey
	if err := getJSON(tx.Bucket(tsigBucket), "TSIG key", name, &st); err != nil {
		return pools.TSIGKey{}, err
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
	err := s.revisioned(ctx, pools.ActionCreate, pools.KindTSIGKey, k.Name, now, func(tx *bbolt.Tx) (any, any, error) {
		if tx.Bucket(tsigBucket).Get([]byte(k.Name)) != nil {
			return nil, nil, pools.NameTaken("TSIG key", k.Name)
		}
		if k.Secret == "" {
			return nil, nil, fmt.Errorf("TSIG key %q: no secret", k.Name)
		}
		if err := k.CheckZones(txn{tx}); err != nil {
			return nil, nil, err
		}
		return nil, k, putJSON(tx.Bucket(tsigBucket), []byte(k.Name), storedTSIGKey{TSIGKey: k, Secret: k.Secret})
	})
	if err != nil {
		return pools.TSIGKey{}, err
	}
	return k, nil
}

// TSIGKeys lists every key by name, without secrets.
func (s *Store) TSIGKeys(ctx context.Context) ([]pools.TSIGKey, error) {
	return list(s, ctx, tsigBucket, func(tx *bbolt.Tx, name string) (pools.TSIGKey, error) {
		k, err := getTSIGKey(tx, name)
		k.Secret = ""
		return k, err
	})
}

// TSIGKey returns the key named name, with its secret.
func (s *Store) TSIGKey(ctx context.Context, name string) (pools.TSIGKey, error) {
	return read(s, ctx, func(tx *bbolt.Tx) (pools.TSIGKey, error) { return getTSIGKey(tx, name) })
}

// DeleteTSIGKey removes a key, bumps the revision and audits it.
func (s *Store) DeleteTSIGKey(ctx context.Context, name string) error {
	return s.revisioned(ctx, pools.ActionDelete, pools.KindTSIGKey, name, s.now(), func(tx *bbolt.Tx) (any, any, error) {
		old, err := getTSIGKey(tx, name)
		if err != nil {
			return nil, nil, err
		}
		return old, nil, tx.Bucket(tsigBucket).Delete([]byte(name))
	})
}
