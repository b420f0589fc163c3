package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"go.etcd.io/bbolt"

	"github.com/glb-dns/glb/pools"
)

// audited runs a write of one object with the rules over a recording
// transaction and appends its audit entry in the same bbolt transaction,
// which concurrent writes may share (batch).
func (s *Store) audited(ctx context.Context, k pools.Kind, fn func(*pools.Recorder) (id string, rev int64, err error)) (int64, error) {
	return s.auditedAll(ctx, pools.OneEntry(ctx, k, s.now, fn))
}

// auditedAll runs a write over a recording transaction and appends the
// audit entries (and the events) it returns in the same transaction.
func (s *Store) auditedAll(ctx context.Context, fn func(*pools.Recorder) ([]pools.AuditEntry, int64, error)) (int64, error) {
	var rev int64
	err := s.batch(ctx, func(tx *bbolt.Tx) error {
		es, r, err := fn(pools.Recording(txn{tx}))
		if err != nil {
			return err
		}
		rev = r
		for i := range es {
			if err := appendAudit(tx, &es[i]); err != nil {
				return err
			}
			if err := writeEvent(tx, &es[i]); err != nil {
				return err
			}
		}
		return nil
	})
	return rev, err
}

// Restore writes a rollback in one transaction; see pools.RestoreIn.
func (s *Store) Restore(ctx context.Context, r *pools.Restore) (int64, error) {
	rev, err := s.auditedAll(ctx, func(rec *pools.Recorder) ([]pools.AuditEntry, int64, error) {
		list := func() ([]pools.Rollout, error) { return listAll[pools.Rollout](rec.Tx.(txn).tx, pools.KindRollout) }
		for _, w := range r.Writes {
			if err := pools.RefuseMoving(w.Object, list); err != nil {
				return nil, 0, err
			}
		}
		return pools.RestoreIn(ctx, rec, r, s.now())
	})
	if err != nil {
		return 0, err
	}
	s.watchers.Notify(pools.Change{Revision: rev})
	return rev, nil
}

// revisioned runs a configuration write outside the object kinds (a token,
// a TSIG key) in one transaction, as every write is: the revision is
// bumped, fn changes the buckets and returns the thing before and after
// (nil for none), its audit entry (action on kind/id, at now) is appended,
// and the watchers hear of the revision once the transaction has
// committed.
func (s *Store) revisioned(ctx context.Context, action string, k pools.Kind, id string, now time.Time, fn func(tx *bbolt.Tx) (before, after any, err error)) error {
	var rev int64
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		var err error
		if rev, err = (txn{tx}).BumpRevision(); err != nil {
			return err
		}
		before, after, err := fn(tx)
		if err != nil {
			return err
		}
		return appendChange(ctx, tx, rev, action, k, id, before, after, now)
	})
	if err != nil {
		return err
	}
	s.watchers.Notify(pools.Change{Revision: rev})
	return nil
}

// appendChange appends the audit entry of action on k/id (the thing
// before and after it, at now) at revision rev: 0 for a write that is not
// part of the configuration.
func appendChange(ctx context.Context, tx *bbolt.Tx, rev int64, action string, k pools.Kind, id string, before, after any, now time.Time) error {
	e, err := pools.NewAuditEntry(ctx, rev, action, k, id, before, after, now)
	if err != nil {
		return err
	}
	return appendAudit(tx, &e)
}

func appendAudit(tx *bbolt.Tx, e *pools.AuditEntry) error {
	b := tx.Bucket(auditBucket)
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	e.ID = int64(seq)
	v, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return b.Put(seqKey(seq), v)
}

// decodeAudit reads an entry as appendAudit stored it.
func decodeAudit(v []byte) (pools.AuditEntry, error) {
	var e pools.AuditEntry
	if err := json.Unmarshal(v, &e); err != nil {
		return e, fmt.Errorf("decode audit entry: %w", err)
	}
	return e, nil
}

func seqKey(seq uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], seq)
	return k[:]
}

// Audit returns one page of entries matching f, newest first. It scans
// the log: one node's history is small enough, and the time filters make
// the usual questions short.
func (s *Store) Audit(ctx context.Context, f pools.AuditFilter, p pools.Page) (pools.AuditList, error) {
	offset, limit := p.Bounds()
	res := pools.AuditList{Items: []pools.AuditEntry{}}
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		c := tx.Bucket(auditBucket).Cursor()
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			e, err := decodeAudit(v)
			if err != nil {
				return err
			}
			if !f.Match(&e) {
				continue
			}
			if res.TotalCount >= offset && res.TotalCount < offset+limit {
				res.Items = append(res.Items, e)
			}
			res.TotalCount++
		}
		return nil
	})
	return res, err
}

// RecordHealth records each transition that differs from the last state
// recorded for its origin.
func (s *Store) RecordHealth(ctx context.Context, at time.Time, ts []pools.HealthTransition) error {
	if len(ts) == 0 {
		return nil
	}
	return s.update(ctx, func(tx *bbolt.Tx) error {
		states := tx.Bucket(auditHealthBucket)
		for _, h := range ts {
			key := []byte(h.Pool + "/" + h.Origin)
			state := []byte{0}
			if h.Healthy {
				state[0] = 1
			}
			was := states.Get(key)
			if was == nil {
				was = []byte{1} // never recorded: healthy
			}
			if bytes.Equal(was, state) {
				continue
			}
			if err := states.Put(key, state); err != nil {
				return err
			}
			e, err := pools.HealthEntry(ctx, h, at)
			if err != nil {
				return err
			}
			if err := appendAudit(tx, &e); err != nil {
				return err
			}
		}
		return nil
	})
}

// PruneAudit deletes entries older than before. Entries are appended in
// time order, so the scan stops at the first one to keep.
func (s *Store) PruneAudit(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		c := tx.Bucket(auditBucket).Cursor()
		for k, v := c.First(); k != nil; k, v = c.First() {
			e, err := decodeAudit(v)
			if err != nil {
				return err
			}
			if !e.Time.Before(before) {
				return nil
			}
			if err := c.Delete(); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}
