// Package embedded is the single-node store: the whole configuration in one
// bbolt file in the node's data directory, for running glbd without
// PostgreSQL.
package embedded

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.etcd.io/bbolt"

	"github.com/glb-dns/glb/pools"
)

// Store implements pools.Store over a bbolt file.
type Store struct {
	db       *bbolt.DB
	watchers pools.Watchers
	now      func() time.Time
}

var _ pools.Store = (*Store)(nil)

// Open opens (creating it and its directory when needed) the store file at
// path. A second process holding the file makes Open fail after a second
// rather than wait forever.
func Open(path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("embedded store: %w", err)
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		return nil, fmt.Errorf("embedded store %s: %w", path, err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		for _, n := range openBuckets() {
			if _, err := tx.CreateBucketIfNotExists(n); err != nil {
				return err
			}
		}
		if tx.Bucket(oldHealthBucket) != nil {
			if err := tx.DeleteBucket(oldHealthBucket); err != nil {
				return err
			}
		}
		if err := initRefs(tx); err != nil {
			return err
		}
		if err := moveRecords(tx); err != nil {
			return err
		}
		return initChanges(tx)
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("embedded store %s: %w", path, err)
	}
	return &Store{db: db, now: time.Now}, nil
}

// Close closes every watch channel and the file.
func (s *Store) Close() error {
	s.watchers.Close()
	return s.db.Close()
}

// unavailable marks storage failures, leaving the domain's errors as they
// are so the API can map them.
func unavailable(err error) error {
	if pools.IsDomainError(err) {
		return err
	}
	return fmt.Errorf("%w: %w", pools.ErrUnavailable, err)
}

func (s *Store) view(ctx context.Context, fn func(*bbolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return unavailable(err)
	}
	return unavailable(s.db.View(fn))
}

func (s *Store) update(ctx context.Context, fn func(*bbolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return unavailable(err)
	}
	return unavailable(s.db.Update(fn))
}

// batch runs a configuration write in a transaction it may share with
// the writes that arrive with it (bbolt's Batch): a commit costs two
// fsyncs, and writers arriving together (several clients, or one syncing a
// whole cluster with requests in parallel) then pay them once. fn may run
// again, alone, when another write of its batch fails, so it only
// touches tx and the variables it sets afresh.
func (s *Store) batch(ctx context.Context, fn func(*bbolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return unavailable(err)
	}
	return unavailable(s.db.Batch(fn))
}

// read returns what get finds in one read transaction.
func read[T any](s *Store, ctx context.Context, get func(tx *bbolt.Tx) (T, error)) (T, error) {
	var out T
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		var err error
		out, err = get(tx)
		return err
	})
	return out, err
}

// list reads every key of bucket with get, in key order, in one read
// transaction.
func list[T any](s *Store, ctx context.Context, bucket []byte, get func(tx *bbolt.Tx, key string) (T, error)) ([]T, error) {
	out := []T{}
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		return tx.Bucket(bucket).ForEach(func(k, _ []byte) error {
			v, err := get(tx, string(k))
			out = append(out, v)
			return err
		})
	})
	return out, err
}

func knownKind(k pools.Kind) error {
	if pools.New(k) == nil {
		return fmt.Errorf("unknown kind %q: %w", k, pools.ErrNotFound)
	}
	return nil
}

// decode reads an object of kind k stored as v in tx: a zone with its
// record rows (records.go).
func decode(tx *bbolt.Tx, k pools.Kind, v []byte) (pools.Object, error) {
	o := pools.New(k)
	if err := json.Unmarshal(v, o); err != nil {
		return nil, fmt.Errorf("decode %s: %w", k.Singular(), err)
	}
	if z, ok := o.(*pools.Zone); ok {
		if err := attachRecords(tx, z); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// getJSON decodes the value under key in b into v; what names the thing in
// errors ("token"), and no value is pools.ErrNotFound.
func getJSON(b *bbolt.Bucket, what, key string, v any) error {
	raw := b.Get([]byte(key))
	if raw == nil {
		return fmt.Errorf("%s %q: %w", what, key, pools.ErrNotFound)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("decode %s %q: %w", what, key, err)
	}
	return nil
}

// putJSON stores v as JSON under key in b.
func putJSON(b *bbolt.Bucket, key []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put(key, raw)
}

// Get returns one object or pools.ErrNotFound.
func (s *Store) Get(ctx context.Context, k pools.Kind, id string) (pools.Object, error) {
	return read(s, ctx, func(tx *bbolt.Tx) (pools.Object, error) { return txn{tx}.Get(k, id) })
}

// List returns one page of a kind ordered by (created_on, id).
func (s *Store) List(ctx context.Context, k pools.Kind, p pools.Page) (pools.ListResult, error) {
	if err := knownKind(k); err != nil {
		return pools.ListResult{}, err
	}
	offset, limit := p.Bounds()
	res := pools.ListResult{Items: []pools.Object{}}
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		objs := tx.Bucket(objectBucket(k))
		c := tx.Bucket(orderBucket(k)).Cursor()
		for key, _ := c.First(); key != nil; key, _ = c.Next() {
			i := res.TotalCount
			res.TotalCount++
			if i < offset || i >= offset+limit {
				continue
			}
			o, err := decode(tx, k, objs.Get(key[8:]))
			if err != nil {
				return err
			}
			res.Items = append(res.Items, o)
		}
		return nil
	})
	return res, err
}

// Create stores a new object; see pools.CreateIn for the rules.
func (s *Store) Create(ctx context.Context, o pools.Object) (pools.Object, error) {
	return s.writeObject(ctx, o.Kind(), func(t *pools.Recorder) (pools.Object, int64, error) {
		return pools.CreateIn(t, o, s.now())
	})
}

// UpdateRecords changes some of a zone's static records; see
// pools.UpdateRecordsIn for the rules.
func (s *Store) UpdateRecords(ctx context.Context, zoneID string, ifRevision int64, c pools.RecordChange) (*pools.Zone, error) {
	out, err := s.writeObject(ctx, pools.KindZone, func(t *pools.Recorder) (pools.Object, int64, error) {
		return pools.UpdateRecordsIn(t, zoneID, ifRevision, c, s.now())
	})
	if err != nil {
		return nil, err
	}
	return out.(*pools.Zone), nil
}

// Replace overwrites an object; see pools.ReplaceIn for the rules.
func (s *Store) Replace(ctx context.Context, o pools.Object, ifRevision int64) (pools.Object, error) {
	return s.writeObject(ctx, o.Kind(), func(t *pools.Recorder) (pools.Object, int64, error) {
		list := func() ([]pools.Rollout, error) { return listAll[pools.Rollout](t.Tx.(txn).tx, pools.KindRollout) }
		if err := pools.RefuseMoving(o, list); err != nil {
			return nil, 0, err
		}
		return pools.ReplaceIn(t, o, ifRevision, s.now())
	})
}

// writeObject runs a write of one object of kind k through the rules
// (fn), audited, and tells the watchers of the new revision.
func (s *Store) writeObject(ctx context.Context, k pools.Kind, fn func(*pools.Recorder) (pools.Object, int64, error)) (pools.Object, error) {
	var out pools.Object
	rev, err := s.audited(ctx, k, func(t *pools.Recorder) (string, int64, error) {
		var rev int64
		var err error
		out, rev, err = fn(t)
		if err != nil {
			return "", 0, err
		}
		return out.ObjectMeta().ID, rev, nil
	})
	if err != nil {
		return nil, err
	}
	s.watchers.Notify(pools.Change{Revision: rev})
	return out, nil
}

// Delete removes an object; see pools.DeleteIn for the rules.
func (s *Store) Delete(ctx context.Context, k pools.Kind, id string, ifRevision int64) error {
	rev, err := s.audited(ctx, k, func(t *pools.Recorder) (string, int64, error) {
		rev, err := pools.DeleteIn(t, k, id, ifRevision, s.now())
		return id, rev, err
	})
	if err != nil {
		return err
	}
	s.watchers.Notify(pools.Change{Revision: rev})
	return nil
}

// Config reads everything in one read transaction, each kind in creation
// order.
func (s *Store) Config(ctx context.Context) (*pools.Config, error) {
	cfg := pools.NewConfig()
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		cfg.Revision = revision(tx)
		for _, k := range pools.StoredKinds {
			err := each(tx, k, func(o pools.Object) { cfg.Add(o) })
			if err != nil {
				return err
			}
		}
		var err error
		cfg.DNSSECKeys, err = allZoneKeys(tx, cfg.Zones)
		return err
	})
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

// each calls fn on every object of a kind in creation order.
func each(tx *bbolt.Tx, k pools.Kind, fn func(pools.Object)) error {
	objs := tx.Bucket(objectBucket(k))
	c := tx.Bucket(orderBucket(k)).Cursor()
	for key, _ := c.First(); key != nil; key, _ = c.Next() {
		o, err := decode(tx, k, objs.Get(key[8:]))
		if err != nil {
			return err
		}
		fn(o)
	}
	return nil
}

func revision(tx *bbolt.Tx) int64 {
	v := tx.Bucket(metaBucket).Get(revisionKey)
	if len(v) != 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v))
}

// Revision is the global configuration revision.
func (s *Store) Revision(ctx context.Context) (int64, error) {
	return read(s, ctx, func(tx *bbolt.Tx) (int64, error) { return revision(tx), nil })
}

// Watch reports every committed write (and health publication) until ctx
// ends; changes coalesce while the reader is busy.
func (s *Store) Watch(ctx context.Context) <-chan pools.Change {
	return s.watchers.Add(ctx)
}
