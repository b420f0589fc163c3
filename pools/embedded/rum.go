package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"net/netip"
	"time"

	"go.etcd.io/bbolt"

	"github.com/glb-dns/glb/pools"
)

// Real user measurements, as PostgreSQL keeps them (migration 023):
//
//	rum.samples  minute (8 bytes) ‖ node ‖ 0 ‖ network ‖ 0 ‖ pool → histogram (4 bytes a bucket)
//	rum.tokens   token → {resolver, network, seen}
var (
	rumSamplesBucket = []byte("rum.samples")
	rumTokensBucket  = []byte("rum.tokens")
)

func rumSampleKey(minute int64, node string, network netip.Prefix, pool string) []byte {
	k := binary.BigEndian.AppendUint64(nil, uint64(minute))
	k = append(append(k, node...), 0)
	k = append(append(k, network.String()...), 0)
	return append(k, pool...)
}

// AddRUMSamples records a node's histograms; see pools.RUMStore.
func (s *Store) AddRUMSamples(ctx context.Context, node string, rows []pools.RUMSamples) error {
	if len(rows) == 0 {
		return nil
	}
	return s.update(ctx, func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(rumSamplesBucket)
		if err != nil {
			return err
		}
		for _, r := range rows {
			v := make([]byte, 0, 4*len(r.Counts))
			for _, c := range r.Counts {
				v = binary.BigEndian.AppendUint32(v, uint32(c))
			}
			if err := b.Put(rumSampleKey(pools.MinuteOf(r.Minute).Unix(), node, r.Network, r.Pool), v); err != nil {
				return err
			}
		}
		return nil
	})
}

// RUMSamples sums every node's histograms since; see pools.RUMStore.
func (s *Store) RUMSamples(ctx context.Context, since time.Time) ([]pools.RUMSamples, error) {
	type key struct {
		network netip.Prefix
		pool    string
	}
	sums := map[key][]int32{}
	var order []key
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(rumSamplesBucket)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.Seek(binary.BigEndian.AppendUint64(nil, uint64(since.Unix()))); k != nil; k, v = c.Next() {
			parts := bytes.Split(k[8:], []byte{0})
			if len(parts) != 3 {
				continue
			}
			p, err := netip.ParsePrefix(string(parts[1]))
			if err != nil {
				continue
			}
			kk := key{p, string(parts[2])}
			h, ok := sums[kk]
			if !ok {
				h = make([]int32, pools.RUMHistogramBuckets)
				order = append(order, kk)
			}
			for i := 0; i+4 <= len(v) && i/4 < len(h); i += 4 {
				h[i/4] += int32(binary.BigEndian.Uint32(v[i:]))
			}
			sums[kk] = h
		}
		return nil
	})
	out := make([]pools.RUMSamples, 0, len(order))
	for _, k := range order {
		out = append(out, pools.RUMSamples{Network: k.network, Pool: k.pool, Counts: sums[k]})
	}
	return out, err
}

type rumTokenDoc struct {
	Resolver string `json:"resolver,omitempty"`
	Network  string `json:"network,omitempty"`
	Seen     int64  `json:"seen"`
}

// AddRUMTokens records what a node saw of beacon tokens; see
// pools.RUMStore.
func (s *Store) AddRUMTokens(ctx context.Context, rows []pools.RUMToken) error {
	if len(rows) == 0 {
		return nil
	}
	return s.update(ctx, func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(rumTokensBucket)
		if err != nil {
			return err
		}
		for _, r := range rows {
			var d rumTokenDoc
			if v := b.Get([]byte(r.Token)); v != nil {
				_ = json.Unmarshal(v, &d) // a damaged entry is written afresh
			}
			if r.Resolver.IsValid() {
				d.Resolver = r.Resolver.String()
			}
			if r.Network.IsValid() {
				d.Network = r.Network.String()
			}
			d.Seen = max(d.Seen, r.Seen.Unix())
			v, err := json.Marshal(d)
			if err != nil {
				return err
			}
			if err := b.Put([]byte(r.Token), v); err != nil {
				return err
			}
		}
		return nil
	})
}

// RUMResolverLinks counts the tokens both sides named; see
// pools.RUMStore.
func (s *Store) RUMResolverLinks(ctx context.Context, since time.Time) ([]pools.RUMResolverLink, error) {
	type key struct{ resolver, network netip.Prefix }
	counts := map[key]int64{}
	var order []key
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(rumTokensBucket)
		if b == nil {
			return nil
		}
		return b.ForEach(func(_, v []byte) error {
			var d rumTokenDoc
			if json.Unmarshal(v, &d) != nil || d.Seen < since.Unix() {
				return nil
			}
			r, err1 := netip.ParsePrefix(d.Resolver)
			n, err2 := netip.ParsePrefix(d.Network)
			if err1 != nil || err2 != nil {
				return nil
			}
			k := key{r, n}
			if _, ok := counts[k]; !ok {
				order = append(order, k)
			}
			counts[k]++
			return nil
		})
	})
	out := make([]pools.RUMResolverLink, 0, len(order))
	for _, k := range order {
		out = append(out, pools.RUMResolverLink{Resolver: k.resolver, Network: k.network, Reports: counts[k]})
	}
	return out, err
}

// PruneRUM deletes samples and tokens older than before.
func (s *Store) PruneRUM(ctx context.Context, before time.Time) error {
	return s.update(ctx, func(tx *bbolt.Tx) error {
		if b := tx.Bucket(rumSamplesBucket); b != nil {
			end := binary.BigEndian.AppendUint64(nil, uint64(before.Unix()))
			var drop [][]byte
			c := b.Cursor()
			for k, _ := c.First(); k != nil && bytes.Compare(k, end) < 0; k, _ = c.Next() {
				drop = append(drop, bytes.Clone(k))
			}
			for _, k := range drop {
				if err := b.Delete(k); err != nil {
					return err
				}
			}
		}
		if b := tx.Bucket(rumTokensBucket); b != nil {
			var drop [][]byte
			err := b.ForEach(func(k, v []byte) error {
				var d rumTokenDoc
				if json.Unmarshal(v, &d) != nil || d.Seen < before.Unix() {
					drop = append(drop, bytes.Clone(k))
				}
				return nil
			})
			if err != nil {
				return err
			}
			for _, k := range drop {
				if err := b.Delete(k); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
