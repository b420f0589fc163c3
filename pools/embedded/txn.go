package embedded

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/glb-dns/glb/pools"
)

// txn is pools.Tx over a bbolt write transaction.
type txn struct{ tx *bbolt.Tx }

var _ pools.Tx = txn{}

func (t txn) BumpRevision() (int64, error) {
	rev := revision(t.tx) + 1
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], uint64(rev))
	return rev, t.tx.Bucket(metaBucket).Put(revisionKey, v[:])
}

func (t txn) Get(k pools.Kind, id string) (pools.Object, error) {
	if err := knownKind(k); err != nil {
		return nil, err
	}
	v := t.tx.Bucket(objectBucket(k)).Get([]byte(id))
	if v == nil {
		return nil, fmt.Errorf("%s %q: %w", k.Singular(), id, pools.ErrNotFound)
	}
	return decode(t.tx, k, v)
}

func (t txn) Exists(k pools.Kind, id string) (bool, error) {
	if err := knownKind(k); err != nil {
		return false, err
	}
	return t.tx.Bucket(objectBucket(k)).Get([]byte(id)) != nil, nil
}

func (t txn) Owner(k pools.Kind, key string) (string, bool, error) {
	v := t.tx.Bucket(uniqueBucket(k)).Get([]byte(key))
	return string(v), v != nil, nil
}

// Referrers reads the reference index (refs.go).
func (t txn) Referrers(k pools.Kind, id string) ([]pools.Referrer, error) {
	return referrers(t.tx, ref{k, id}), nil
}

func orderKey(m *pools.Meta) []byte {
	key := make([]byte, 8, 8+len(m.ID))
	binary.BigEndian.PutUint64(key, uint64(m.CreatedOn.UnixNano()))
	return append(key, m.ID...)
}

func (t txn) Put(o, old pools.Object) error {
	k, m := o.Kind(), o.ObjectMeta()
	if z, ok := o.(*pools.Zone); ok {
		oz, _ := old.(*pools.Zone)
		if err := putZone(t.tx, z, oz); err != nil {
			return err
		}
	} else {
		b, err := json.Marshal(o)
		if err != nil {
			return err
		}
		if err := t.tx.Bucket(objectBucket(k)).Put([]byte(m.ID), b); err != nil {
			return err
		}
	}
	if old != nil {
		if err := indexRefs(t.tx, old, false); err != nil {
			return err
		}
	}
	if err := indexRefs(t.tx, o, true); err != nil {
		return err
	}
	if old == nil {
		if err := t.tx.Bucket(orderBucket(k)).Put(orderKey(m), nil); err != nil {
			return err
		}
	} else if err := t.dropUnique(old); err != nil {
		return err
	}
	if _, key, ok := pools.UniqueKey(o); ok {
		if err := t.tx.Bucket(uniqueBucket(k)).Put([]byte(key), []byte(m.ID)); err != nil {
			return err
		}
	}
	return logChange(t.tx, k, m.ID)
}

func (t txn) dropUnique(o pools.Object) error {
	_, key, ok := pools.UniqueKey(o)
	if !ok {
		return nil
	}
	u := t.tx.Bucket(uniqueBucket(o.Kind()))
	if string(u.Get([]byte(key))) != o.ObjectMeta().ID {
		return nil
	}
	return u.Delete([]byte(key))
}

func (t txn) Remove(old pools.Object) error {
	k, m := old.Kind(), old.ObjectMeta()
	if err := t.tx.Bucket(objectBucket(k)).Delete([]byte(m.ID)); err != nil {
		return err
	}
	if k == pools.KindZone {
		if err := dropRecords(t.tx, m.ID); err != nil {
			return err
		}
	}
	if err := indexRefs(t.tx, old, false); err != nil {
		return err
	}
	if err := t.tx.Bucket(orderBucket(k)).Delete(orderKey(m)); err != nil {
		return err
	}
	if err := t.dropUnique(old); err != nil {
		return err
	}
	return logChange(t.tx, k, m.ID)
}
