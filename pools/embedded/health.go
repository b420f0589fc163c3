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

type storedBeat struct {
	Region    string    `json:"region"`
	Published time.Time `json:"published"`
	Epoch     int64     `json:"epoch"`
	Seq       int64     `json:"seq"`
}

type storedOrigin struct {
	Seq     int64         `json:"seq"`
	Gone    bool          `json:"gone,omitempty"`
	Healthy bool          `json:"healthy"`
	Reason  string        `json:"reason,omitempty"`
	RTT     time.Duration `json:"rtt"`
	// Monitors: each monitor's view, for a pool with a monitor group.
	Monitors []pools.MonitorState `json:"monitors,omitempty"`
}

// decodeOrigin reads the stored row of pool/origin.
func decodeOrigin(pool, origin string, v []byte) (storedOrigin, error) {
	var row storedOrigin
	if err := json.Unmarshal(v, &row); err != nil {
		return row, fmt.Errorf("decode health of %s/%s: %w", pool, origin, err)
	}
	return row, nil
}

// state is the row as a node's state of pool/origin, confirmed by the
// node's heartbeat at published.
func (row *storedOrigin) state(pool, origin string, published time.Time) pools.OriginState {
	return pools.OriginState{Pool: pool, Origin: origin, Healthy: row.Healthy, Reason: row.Reason, RTT: row.RTT, CheckedAt: published,
		Monitors: row.Monitors}
}

func appendName(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// cutName reads one length-prefixed name off the front of b.
func cutName(b []byte) (string, []byte, bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return "", nil, false
	}
	return string(b[k : k+int(n)]), b[k+int(n):], true
}

func originKey(node, pool, origin string) []byte {
	return appendName(appendName(appendName(nil, node), pool), origin)
}

func logKey(node string, seq int64, pool, origin string) []byte {
	b := binary.BigEndian.AppendUint64(appendName(nil, node), uint64(seq))
	return appendName(appendName(b, pool), origin)
}

// PublishHealth records the heartbeat and changes of u in one transaction
// and notifies watchers when origins changed.
func (s *Store) PublishHealth(ctx context.Context, u pools.HealthUpdate) error {
	if u.Node == "" {
		return &pools.ValidationError{Errors: []pools.FieldError{{Path: "node", Message: "required"}}}
	}
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		nodes := tx.Bucket(healthNodesBucket)
		var beat storedBeat
		if v := nodes.Get([]byte(u.Node)); v != nil {
			if err := json.Unmarshal(v, &beat); err != nil {
				return fmt.Errorf("decode heartbeat of %s: %w", u.Node, err)
			}
		}
		beat.Region, beat.Published = u.Region, u.Published
		if u.Full || beat.Epoch == 0 {
			beat.Epoch++
			if err := dropNode(tx, u.Node); err != nil {
				return err
			}
		}
		if u.Changed() {
			beat.Seq++
			if err := writeOrigins(tx, u, beat.Seq); err != nil {
				return err
			}
		}
		b, err := json.Marshal(beat)
		if err != nil {
			return err
		}
		return nodes.Put([]byte(u.Node), b)
	})
	if err != nil {
		return err
	}
	if u.Changed() {
		s.watchers.Notify(pools.Change{Health: true})
	}
	return nil
}

// dropNode deletes every origin row and log entry of node.
func dropNode(tx *bbolt.Tx, node string) error {
	prefix := appendName(nil, node)
	for _, name := range [][]byte{healthOriginsBucket, healthLogBucket} {
		c := tx.Bucket(name).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Seek(prefix) {
			if err := c.Delete(); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeOrigins stores u's states and removals at seq, moving each origin's
// log entry to seq.
func writeOrigins(tx *bbolt.Tx, u pools.HealthUpdate, seq int64) error {
	rows, log := tx.Bucket(healthOriginsBucket), tx.Bucket(healthLogBucket)
	put := func(pool, origin string, row storedOrigin) error {
		key := originKey(u.Node, pool, origin)
		if old := rows.Get(key); old != nil {
			var o storedOrigin
			if err := json.Unmarshal(old, &o); err != nil {
				return fmt.Errorf("decode health of %s/%s: %w", pool, origin, err)
			}
			if o.Gone && row.Gone {
				return nil // withdrawn already
			}
			if err := log.Delete(logKey(u.Node, o.Seq, pool, origin)); err != nil {
				return err
			}
		} else if row.Gone {
			return nil // nothing to withdraw
		}
		row.Seq = seq
		b, err := json.Marshal(row)
		if err != nil {
			return err
		}
		if err := rows.Put(key, b); err != nil {
			return err
		}
		return log.Put(logKey(u.Node, seq, pool, origin), nil)
	}
	for _, st := range u.Origins {
		if err := put(st.Pool, st.Origin, storedOrigin{Healthy: st.Healthy, Reason: st.Reason, RTT: st.RTT, Monitors: st.Monitors}); err != nil {
			return err
		}
	}
	for _, k := range u.Removed {
		if err := put(k.Pool, k.Origin, storedOrigin{Gone: true}); err != nil {
			return err
		}
	}
	return nil
}

// HealthSince returns every node's changes since cursors (by node name),
// ordered by node name.
func (s *Store) HealthSince(ctx context.Context, cursors map[string]pools.HealthCursor) ([]pools.HealthUpdate, error) {
	out := []pools.HealthUpdate{}
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		return tx.Bucket(healthNodesBucket).ForEach(func(k, v []byte) error {
			u, beat, err := decodeBeat(k, v)
			if err != nil {
				return err
			}
			cur, ok := cursors[u.Node]
			u.Full = !ok || cur.Epoch != beat.Epoch || cur.Seq > beat.Seq
			if u.Full {
				cur.Seq = 0
			}
			prefix := appendName(nil, u.Node)
			rows := tx.Bucket(healthOriginsBucket)
			c := tx.Bucket(healthLogBucket).Cursor()
			for lk, _ := c.Seek(binary.BigEndian.AppendUint64(prefix, uint64(cur.Seq+1))); lk != nil && bytes.HasPrefix(lk, prefix); lk, _ = c.Next() {
				rest := lk[len(prefix):]
				if len(rest) < 8 {
					return fmt.Errorf("health log key %q", lk)
				}
				pool, rest, ok1 := cutName(rest[8:])
				origin, _, ok2 := cutName(rest)
				if !ok1 || !ok2 {
					return fmt.Errorf("health log key %q", lk)
				}
				row, err := decodeOrigin(pool, origin, rows.Get(originKey(u.Node, pool, origin)))
				if err != nil {
					return err
				}
				switch {
				case row.Gone && !u.Full:
					u.Removed = append(u.Removed, pools.OriginKey{Pool: pool, Origin: origin})
				case !row.Gone:
					u.Origins = append(u.Origins, row.state(pool, origin, beat.Published))
				}
			}
			out = append(out, u)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func decodeBeat(k, v []byte) (pools.HealthUpdate, storedBeat, error) {
	var beat storedBeat
	if err := json.Unmarshal(v, &beat); err != nil {
		return pools.HealthUpdate{}, beat, fmt.Errorf("decode heartbeat of %s: %w", k, err)
	}
	return pools.HealthUpdate{Node: string(k), Region: beat.Region, Published: beat.Published,
		Cursor: pools.HealthCursor{Epoch: beat.Epoch, Seq: beat.Seq}}, beat, nil
}

// HealthViews returns every node's view, ordered by node name; pool not
// empty keeps that pool's origins only.
func (s *Store) HealthViews(ctx context.Context, pool string) ([]pools.NodeHealth, error) {
	views := []pools.NodeHealth{}
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		return tx.Bucket(healthNodesBucket).ForEach(func(k, v []byte) error {
			u, _, err := decodeBeat(k, v)
			if err != nil {
				return err
			}
			view := pools.NodeHealth{Node: u.Node, Region: u.Region, Published: u.Published, Origins: []pools.OriginState{}}
			prefix := appendName(nil, u.Node)
			if pool != "" {
				prefix = appendName(prefix, pool)
			}
			c := tx.Bucket(healthOriginsBucket).Cursor()
			for rk, rv := c.Seek(prefix); rk != nil && bytes.HasPrefix(rk, prefix); rk, rv = c.Next() {
				_, rest, _ := cutName(rk)
				p, rest, ok1 := cutName(rest)
				origin, _, ok2 := cutName(rest)
				if !ok1 || !ok2 {
					return fmt.Errorf("health key %q", rk)
				}
				row, err := decodeOrigin(p, origin, rv)
				if err != nil {
					return err
				}
				if !row.Gone {
					view.Origins = append(view.Origins, row.state(p, origin, u.Published))
				}
			}
			views = append(views, view)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return views, nil
}
