package embedded

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"go.etcd.io/bbolt"

	"github.com/glb-dns/glb/pools"
)

// A zone's static records are kept apart from its settings: the zones
// bucket holds the zone without them, and the bucket of the zone's id in
// zone.records one row per record, sequence number (8 bytes, big-endian)
// → the record (encodeRecord), so that a zone's records read back in the
// order they were written and an UPDATE writes the rows it changes, not
// a zone of 10,000 records. Files from before keep the records inside the
// zone; Open moves them (moveRecords) and marks the file done in meta.
var (
	zoneRecordsBucket = []byte("zone.records")
	recordsMovedKey   = []byte("zone_records_moved")
)

// encodeRecord is a record as a row: each string preceded by its length
// (uvarint), then the TTL (uvarint). Rows are compared as bytes to find
// the one to remove, so a record has exactly one encoding.
func encodeRecord(r pools.Record) []byte {
	b := make([]byte, 0, len(r.Name)+len(r.Type)+len(r.Content)+len(r.Owner)+12)
	for _, s := range []string{r.Name, r.Type, r.Content, r.Owner} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return binary.AppendUvarint(b, uint64(r.TTL))
}

var errBadRow = errors.New("bad record row")

func decodeRecord(b []byte) (pools.Record, error) {
	var f [4]string
	for i := range f {
		n, w := binary.Uvarint(b)
		if w <= 0 || uint64(len(b)-w) < n {
			return pools.Record{}, errBadRow
		}
		f[i] = string(b[w : w+int(n)])
		b = b[w+int(n):]
	}
	ttl, w := binary.Uvarint(b)
	if w <= 0 || w != len(b) || ttl > 1<<32-1 {
		return pools.Record{}, errBadRow
	}
	return pools.Record{Name: f[0], Type: f[1], Content: f[2], Owner: f[3], TTL: uint32(ttl)}, nil
}

// recordRows returns the rows bucket of zone id, nil when it has none
// (no records, or a read-only transaction before the first write).
func recordRows(tx *bbolt.Tx, id string) *bbolt.Bucket {
	top := tx.Bucket(zoneRecordsBucket)
	if top == nil {
		return nil
	}
	return top.Bucket([]byte(id))
}

// attachRecords reads zone z's rows into z.Records, in order.
func attachRecords(tx *bbolt.Tx, z *pools.Zone) error {
	z.Records = []pools.Record{}
	rows := recordRows(tx, z.ID)
	if rows == nil {
		return nil
	}
	z.Records = make([]pools.Record, 0, rows.Stats().KeyN)
	return rows.ForEach(func(_, v []byte) error {
		r, err := decodeRecord(v)
		if err != nil {
			return fmt.Errorf("zone %s: %w", z.ID, err)
		}
		z.Records = append(z.Records, r)
		return nil
	})
}

// zoneSettings is z as the zones bucket holds it: without its records.
func zoneSettings(z *pools.Zone) ([]byte, error) {
	c := *z
	c.Records = nil
	return json.Marshal(&c)
}

// putZone stores zone z, old before it (nil on create): its settings, and
// its rows written again unless they did not change (a serial moved by a
// load balancer's write).
func putZone(tx *bbolt.Tx, z, old *pools.Zone) error {
	doc, err := zoneSettings(z)
	if err != nil {
		return err
	}
	if err := tx.Bucket(objectBucket(pools.KindZone)).Put([]byte(z.ID), doc); err != nil {
		return err
	}
	if old != nil && slices.Equal(z.Records, old.Records) {
		return nil
	}
	if err := dropRecords(tx, z.ID); err != nil {
		return err
	}
	return addRecords(tx, z.ID, z.Records)
}

// addRecords appends rows for recs to zone id's.
func addRecords(tx *bbolt.Tx, id string, recs []pools.Record) error {
	if len(recs) == 0 {
		return nil
	}
	top, err := tx.CreateBucketIfNotExists(zoneRecordsBucket)
	if err != nil {
		return err
	}
	rows, err := top.CreateBucketIfNotExists([]byte(id))
	if err != nil {
		return err
	}
	rows.FillPercent = 0.9 // appended in order
	for _, r := range recs {
		seq, err := rows.NextSequence()
		if err != nil {
			return err
		}
		if err := rows.Put(seqKey(seq), encodeRecord(r)); err != nil {
			return err
		}
	}
	return nil
}

// dropRecords deletes zone id's rows.
func dropRecords(tx *bbolt.Tx, id string) error {
	top := tx.Bucket(zoneRecordsBucket)
	if top == nil || top.Bucket([]byte(id)) == nil {
		return nil
	}
	return top.DeleteBucket([]byte(id))
}

// removeRecords deletes one row for each record of recs, the first of
// equal ones; a record without a row is pools.ErrStale.
func removeRecords(tx *bbolt.Tx, id string, recs []pools.Record) error {
	if len(recs) == 0 {
		return nil
	}
	want := make([][]byte, len(recs))
	for i, r := range recs {
		want[i] = encodeRecord(r)
	}
	var keys [][]byte
	if rows := recordRows(tx, id); rows != nil {
		c := rows.Cursor()
		for k, v := c.First(); k != nil && len(keys) < len(recs); k, v = c.Next() {
			for i, w := range want {
				if w != nil && bytes.Equal(v, w) {
					keys, want[i] = append(keys, bytes.Clone(k)), nil
					break
				}
			}
		}
		for _, k := range keys {
			if err := rows.Delete(k); err != nil {
				return err
			}
		}
	}
	if len(keys) != len(recs) {
		return fmt.Errorf("zone %s: %d of the records to remove are not stored: %w", id, len(recs)-len(keys), pools.ErrStale)
	}
	return nil
}

// PatchZone stores z's settings and the rows c changes.
func (t txn) PatchZone(z, old *pools.Zone, c pools.RecordChange) error {
	doc, err := zoneSettings(z)
	if err != nil {
		return err
	}
	if err := t.tx.Bucket(objectBucket(pools.KindZone)).Put([]byte(z.ID), doc); err != nil {
		return err
	}
	if err := removeRecords(t.tx, z.ID, c.Removed); err != nil {
		return err
	}
	if err := addRecords(t.tx, z.ID, c.Added); err != nil {
		return err
	}
	return logChange(t.tx, pools.KindZone, z.ID)
}

// moveRecords moves the records of every zone stored with them inside
// (files from before the rows) into rows, once.
func moveRecords(tx *bbolt.Tx) error {
	meta := tx.Bucket(metaBucket)
	if meta.Get(recordsMovedKey) != nil {
		return nil
	}
	zones := tx.Bucket(objectBucket(pools.KindZone))
	type moved struct {
		id   string
		zone *pools.Zone
	}
	var all []moved
	err := zones.ForEach(func(k, v []byte) error {
		z := pools.New(pools.KindZone).(*pools.Zone)
		if err := json.Unmarshal(v, z); err != nil {
			return fmt.Errorf("decode zone %s: %w", k, err)
		}
		all = append(all, moved{string(k), z})
		return nil
	})
	if err != nil {
		return err
	}
	for _, m := range all {
		if recordRows(tx, m.id) != nil {
			return fmt.Errorf("zone %s has record rows and records inside", m.id)
		}
		if err := putZone(tx, m.zone, nil); err != nil {
			return err
		}
	}
	return meta.Put(recordsMovedKey, []byte{1})
}
