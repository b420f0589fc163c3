package embedded

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"net/netip"
	"slices"
	"time"

	"go.etcd.io/bbolt"

	"github.com/glb-dns/glb/pools"
)

type answerKey struct {
	step   int
	bucket int64
	node   string
	cell   [5]string // pool, origin, region, country, rcode
}

func encodeAnswerKey(lb string, k answerKey) []byte {
	b := append([]byte(lb), 0, byte(k.step))
	b = binary.BigEndian.AppendUint64(b, uint64(k.bucket))
	b = append(b, k.node...)
	for _, s := range k.cell {
		b = append(append(b, 0), s...)
	}
	return b
}

func decodeAnswerKey(key []byte) (lb string, k answerKey, ok bool) {
	lbEnd := bytes.IndexByte(key, 0)
	if lbEnd < 0 || len(key) < lbEnd+10 {
		return "", k, false
	}
	lb, k.step, k.bucket = string(key[:lbEnd]), int(key[lbEnd+1]), int64(binary.BigEndian.Uint64(key[lbEnd+2:]))
	parts := bytes.Split(key[lbEnd+10:], []byte{0})
	if len(parts) != 6 {
		return "", k, false
	}
	k.node = string(parts[0])
	for i := range k.cell {
		k.cell[i] = string(parts[i+1])
	}
	return lb, k, true
}

func answerRow(lb string, k answerKey, n int64) pools.AnswerCount {
	return pools.AnswerCount{Bucket: time.Unix(k.bucket, 0).UTC(), Step: k.step, LoadBalancer: lb, Pool: k.cell[0], Origin: k.cell[1],
		Region: k.cell[2], Country: k.cell[3], Rcode: k.cell[4], Answers: n}
}

func cellOf(r pools.AnswerCount) [5]string {
	return [5]string{r.Pool, r.Origin, r.Region, r.Country, r.Rcode}
}

// AddAnswerCounts records a node's rows; a row already recorded for the
// node is replaced.
func (s *Store) AddAnswerCounts(ctx context.Context, node string, rows []pools.AnswerCount) error {
	return putRows(s, ctx, answerBucket, rows, func(r pools.AnswerCount) ([]byte, int64) {
		return encodeAnswerKey(r.LoadBalancer, answerKey{step: r.Step, bucket: r.Bucket.Unix(), node: node, cell: cellOf(r)}), r.Answers
	})
}

// putRows puts each row under the key kv gives it, its count as 8
// big-endian bytes, in one write transaction; the bucket is made by the
// first write.
func putRows[R any](s *Store, ctx context.Context, bucket []byte, rows []R, kv func(R) ([]byte, int64)) error {
	if len(rows) == 0 {
		return nil
	}
	return s.update(ctx, func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucket)
		if err != nil {
			return err
		}
		for _, r := range rows {
			k, n := kv(r)
			if err := b.Put(k, binary.BigEndian.AppendUint64(nil, uint64(n))); err != nil {
				return err
			}
		}
		return nil
	})
}

// AnswerCounts sums the nodes' rows of lb per bucket and cell.
func (s *Store) AnswerCounts(ctx context.Context, lb string, since, until time.Time) ([]pools.AnswerCount, error) {
	type sumKey struct {
		step   int
		bucket int64
		cell   [5]string
	}
	sums := map[sumKey]int64{}
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(answerBucket)
		if b == nil {
			return nil
		}
		for _, step := range []int{pools.AnswerStepFine, pools.AnswerStepCoarse} {
			from := encodeAnswerKey(lb, answerKey{step: step, bucket: since.Unix()})
			from = from[:len(lb)+10]
			to := binary.BigEndian.AppendUint64(append([]byte(lb), 0, byte(step)), uint64(until.Unix()))
			c := b.Cursor()
			for k, v := c.Seek(from); k != nil && bytes.Compare(k, to) < 0; k, v = c.Next() {
				klb, ak, ok := decodeAnswerKey(k)
				if !ok || klb != lb || ak.step != step {
					continue
				}
				sums[sumKey{ak.step, ak.bucket, ak.cell}] += int64(binary.BigEndian.Uint64(v))
			}
		}
		return nil
	})
	out := make([]pools.AnswerCount, 0, len(sums))
	for k, n := range sums {
		out = append(out, answerRow(lb, answerKey{step: k.step, bucket: k.bucket, cell: k.cell}, n))
	}
	slices.SortFunc(out, func(a, b pools.AnswerCount) int {
		return cmp.Or(a.Bucket.Compare(b.Bucket), cmp.Compare(a.Step, b.Step))
	})
	return out, err
}

// CompactAnswerCounts merges old 10-second rows into minute rows and
// deletes rows older than keep, in one write transaction.
func (s *Store) CompactAnswerCounts(ctx context.Context, fine, keep time.Time) error {
	fineAt, keepAt := pools.MinuteOf(fine).Unix(), keep.Unix()
	return s.update(ctx, func(tx *bbolt.Tx) error {
		if err := pruneSamples(tx, fineAt); err != nil {
			return err
		}
		b := tx.Bucket(answerBucket)
		if b == nil {
			return nil
		}
		var drop [][]byte
		merged := map[string]int64{}
		err := b.ForEach(func(k, v []byte) error {
			lb, ak, ok := decodeAnswerKey(k)
			switch {
			case !ok || ak.bucket < keepAt:
				drop = append(drop, bytes.Clone(k))
			case ak.step == pools.AnswerStepFine && ak.bucket < fineAt:
				drop = append(drop, bytes.Clone(k))
				ak.step, ak.bucket, ak.node = pools.AnswerStepCoarse, ak.bucket-ak.bucket%60, ""
				merged[string(encodeAnswerKey(lb, ak))] += int64(binary.BigEndian.Uint64(v))
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
		for k, n := range merged {
			if old := b.Get([]byte(k)); old != nil {
				n += int64(binary.BigEndian.Uint64(old))
			}
			if err := b.Put([]byte(k), binary.BigEndian.AppendUint64(nil, uint64(n))); err != nil {
				return err
			}
		}
		return nil
	})
}

// AddQuerySamples records a node's sampled queries; a row already
// recorded for the node is replaced.
func (s *Store) AddQuerySamples(ctx context.Context, node string, rows []pools.QuerySample) error {
	return putRows(s, ctx, sampleBucket, rows, func(r pools.QuerySample) ([]byte, int64) {
		k := binary.BigEndian.AppendUint64(nil, r.LB)
		k = binary.BigEndian.AppendUint64(k, uint64(r.Minute.Unix()))
		k = binary.BigEndian.AppendUint16(k, r.Type)
		return append(append(append(k, node...), 0), r.Subnet.String()...), r.Count
	})
}

// QuerySamples sums the nodes' samples of lb per minute, subnet and type.
func (s *Store) QuerySamples(ctx context.Context, lb uint64, since time.Time) ([]pools.QuerySample, error) {
	type sumKey struct {
		minute int64
		subnet string
		qtype  uint16
	}
	sums := map[sumKey]int64{}
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(sampleBucket)
		if b == nil {
			return nil
		}
		prefix := binary.BigEndian.AppendUint64(nil, lb)
		c := b.Cursor()
		for k, v := c.Seek(binary.BigEndian.AppendUint64(bytes.Clone(prefix), uint64(since.Unix()))); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if len(k) < 18 {
				continue
			}
			_, subnet, ok := bytes.Cut(k[18:], []byte{0})
			if !ok {
				continue
			}
			sums[sumKey{int64(binary.BigEndian.Uint64(k[8:])), string(subnet), binary.BigEndian.Uint16(k[16:])}] += int64(binary.BigEndian.Uint64(v))
		}
		return nil
	})
	out := make([]pools.QuerySample, 0, len(sums))
	for k, n := range sums {
		p, perr := netip.ParsePrefix(k.subnet)
		if perr != nil {
			continue
		}
		out = append(out, pools.QuerySample{Minute: time.Unix(k.minute, 0).UTC(), LB: lb, Subnet: p, Type: k.qtype, Count: n})
	}
	slices.SortFunc(out, func(a, b pools.QuerySample) int {
		return cmp.Or(a.Minute.Compare(b.Minute), cmp.Compare(a.Subnet.String(), b.Subnet.String()))
	})
	return out, err
}

// pruneSamples deletes the samples of minutes before t.
func pruneSamples(tx *bbolt.Tx, t int64) error {
	b := tx.Bucket(sampleBucket)
	if b == nil {
		return nil
	}
	var drop [][]byte
	err := b.ForEach(func(k, _ []byte) error {
		if len(k) < 16 || int64(binary.BigEndian.Uint64(k[8:])) < t {
			drop = append(drop, bytes.Clone(k))
		}
		return nil
	})
	for _, k := range drop {
		if err == nil {
			err = b.Delete(k)
		}
	}
	return err
}
