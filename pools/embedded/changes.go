package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"go.etcd.io/bbolt"

	"github.com/glb-dns/glb/pools"
)

func putInt(b *bbolt.Bucket, key []byte, v int64) error {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], uint64(v))
	return b.Put(key, buf[:])
}

func getInt(b *bbolt.Bucket, key []byte) int64 {
	v := b.Get(key)
	if len(v) != 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v))
}

// initChanges creates the change log; a store written before it existed
// starts with its horizon at the current revision.
func initChanges(tx *bbolt.Tx) error {
	if tx.Bucket(changesBucket) != nil {
		return nil
	}
	if _, err := tx.CreateBucket(changesBucket); err != nil {
		return err
	}
	return putInt(tx.Bucket(metaBucket), horizonKey, revision(tx))
}

func changeKey(rev int64, k pools.Kind, id string) []byte {
	key := make([]byte, 8, 8+len(k)+1+len(id))
	binary.BigEndian.PutUint64(key, uint64(rev))
	key = append(key, k...)
	key = append(key, 0)
	return append(key, id...)
}

// logChange records a write of (k, id) at the transaction's revision and
// drops what has fallen out of the kept window.
func logChange(tx *bbolt.Tx, k pools.Kind, id string) error {
	rev := revision(tx)
	b := tx.Bucket(changesBucket)
	if err := b.Put(changeKey(rev, k, id), nil); err != nil {
		return err
	}
	cut := rev - pools.ChangeLogRevisions
	meta := tx.Bucket(metaBucket)
	if cut <= getInt(meta, horizonKey) {
		return nil
	}
	c := b.Cursor()
	for key, _ := c.First(); key != nil && int64(binary.BigEndian.Uint64(key)) <= cut; key, _ = c.First() {
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return putInt(meta, horizonKey, cut)
}

// Changes reports the objects written or deleted after revision since.
func (s *Store) Changes(ctx context.Context, since int64) (*pools.ChangeSet, error) {
	var cs *pools.ChangeSet
	var gap error // outside the transaction's errors: not a storage failure
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		rev := revision(tx)
		if gap = pools.ChangeGap(since, getInt(tx.Bucket(metaBucket), horizonKey), rev); gap != nil {
			return nil
		}
		cs = &pools.ChangeSet{Since: since, Revision: rev}
		type ref struct {
			k  pools.Kind
			id string
		}
		last := map[ref]int64{}
		var order []ref
		var start [8]byte
		binary.BigEndian.PutUint64(start[:], uint64(since+1))
		c := tx.Bucket(changesBucket).Cursor()
		for key, _ := c.Seek(start[:]); key != nil; key, _ = c.Next() {
			kind, id, ok := bytes.Cut(key[8:], []byte{0})
			if !ok {
				return fmt.Errorf("change log key %x malformed", key)
			}
			r := ref{pools.Kind(kind), string(id)}
			if _, seen := last[r]; !seen {
				order = append(order, r)
			}
			last[r] = int64(binary.BigEndian.Uint64(key))
		}
		slices.SortStableFunc(order, func(a, b ref) int { return int(last[a] - last[b]) })
		for _, r := range order {
			oc := pools.ObjectChange{Kind: r.k, ID: r.id, Revision: last[r]}
			if v := tx.Bucket(objectBucket(r.k)).Get([]byte(r.id)); v != nil {
				o, err := decode(tx, r.k, v)
				if err != nil {
					return err
				}
				oc.Object = o
			}
			cs.Changes = append(cs.Changes, oc)
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
