package embedded

import (
	"context"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/glb-dns/glb/pools"
)

func putNode(tx *bbolt.Tx, r *pools.NodeRecord) error {
	b, err := tx.CreateBucketIfNotExists(nodesBucket)
	if err != nil {
		return err
	}
	v, err := pools.EncodeNode(r)
	if err != nil {
		return err
	}
	return b.Put([]byte(r.Status.Name), v)
}

func getNode(tx *bbolt.Tx, name string) (pools.NodeRecord, bool, error) {
	b := tx.Bucket(nodesBucket)
	if b == nil {
		return pools.NodeRecord{}, false, nil
	}
	v := b.Get([]byte(name))
	if v == nil {
		return pools.NodeRecord{}, false, nil
	}
	r, err := pools.DecodeNode(v)
	if err != nil {
		return r, false, fmt.Errorf("decode node %q: %w", name, err)
	}
	return r, true, nil
}

// ReportNode records a node's status; see pools.NodeStore.
func (s *Store) ReportNode(ctx context.Context, st pools.NodeStatus) (*pools.NodeDrain, error) {
	if st.Name == "" {
		return nil, &pools.ValidationError{Errors: []pools.FieldError{{Path: "name", Message: "required"}}}
	}
	var drain *pools.NodeDrain
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		r, _, err := getNode(tx, st.Name)
		if err != nil {
			return err
		}
		pools.ReportNodeIn(&r, st, revision(tx), s.now())
		drain = r.Drain
		return putNode(tx, &r)
	})
	return drain, err
}

// Nodes returns every node, ordered by name.
func (s *Store) Nodes(ctx context.Context) (pools.NodeList, error) {
	out := pools.NodeList{Items: []pools.NodeRecord{}}
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		out.Revision = revision(tx)
		b := tx.Bucket(nodesBucket)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			r, err := pools.DecodeNode(v)
			if err != nil {
				return fmt.Errorf("decode node %q: %w", k, err)
			}
			out.Items = append(out.Items, r)
			return nil
		})
	})
	return out, err
}

// DrainNode asks a node to drain or to serve again, audited.
func (s *Store) DrainNode(ctx context.Context, name string, d *pools.NodeDrain) (pools.NodeRecord, error) {
	var out pools.NodeRecord
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		r, ok, err := getNode(tx, name)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("node %q: %w", name, pools.ErrNotFound)
		}
		e, err := pools.DrainAudit(ctx, name, r.Drain, d, s.now())
		if err != nil {
			return err
		}
		r.Drain = d
		if err := putNode(tx, &r); err != nil {
			return err
		}
		out = r
		return appendAudit(tx, &e)
	})
	if err == nil {
		s.watchers.Notify(pools.Change{Drain: true})
	}
	return out, err
}
