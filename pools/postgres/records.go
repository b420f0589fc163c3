package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/glb-dns/glb/pools"
)

// A zone's static records are rows of zone_records (migration 021), in
// the order seq gives, and its document holds the rest: an UPDATE of a
// zone of 10,000 records writes the rows it changes.

// UpdateRecords changes some of a zone's static records; see
// pools.UpdateRecordsIn for the rules.
func (s *Store) UpdateRecords(ctx context.Context, zoneID string, ifRevision int64, c pools.RecordChange) (*pools.Zone, error) {
	var out *pools.Zone
	err := s.audited(ctx, pools.KindZone, func(t *pools.Recorder) (string, int64, error) {
		var rev int64
		var err error
		out, rev, err = pools.UpdateRecordsIn(t, zoneID, ifRevision, c, s.now())
		return zoneID, rev, err
	})
	return out, err
}

var recordColumns = []string{"zone_id", "seq", "name", "type", "content", "ttl", "owner"}

// attachRecords reads the records of zones into them, each zone's in
// order; zones holds every zone by id.
func attachRecords(ctx context.Context, tx pgx.Tx, zones map[string]*pools.Zone) error {
	if len(zones) == 0 {
		return nil
	}
	ids := make([]string, 0, len(zones))
	for id, z := range zones {
		ids = append(ids, id)
		z.Records = []pools.Record{}
	}
	rows, err := tx.Query(ctx, "select zone_id, name, type, content, ttl, owner from zone_records where zone_id = any($1::text[]) order by zone_id, seq", ids)
	if err != nil {
		return err
	}
	var id string
	var r pools.Record
	var ttl int64
	_, err = pgx.ForEachRow(rows, []any{&id, &r.Name, &r.Type, &r.Content, &ttl, &r.Owner}, func() error {
		r.TTL = uint32(ttl)
		z := zones[id]
		z.Records = append(z.Records, r)
		return nil
	})
	return err
}

// attachObjects is attachRecords for the zones among objs.
func attachObjects(ctx context.Context, tx pgx.Tx, objs []pools.Object) error {
	zones := map[string]*pools.Zone{}
	for _, o := range objs {
		if z, ok := o.(*pools.Zone); ok {
			zones[z.ID] = z
		}
	}
	return attachRecords(ctx, tx, zones)
}

// zoneDoc is z's document: the zone without its records.
func zoneDoc(z *pools.Zone) ([]byte, error) {
	c := *z
	c.Records = nil
	return json.Marshal(&c)
}

// putZone stores z (old before it, nil on create): its row, and its
// records written again unless they did not change (a serial moved by a
// load balancer's write).
func (t *txn) putZone(z, old *pools.Zone) error {
	doc, err := zoneDoc(z)
	if err != nil {
		return err
	}
	if err := t.upsertZone(z, doc); err != nil {
		return err
	}
	if old != nil && slices.Equal(z.Records, old.Records) {
		return nil
	}
	if _, err := t.tx.Exec(t.ctx, "delete from zone_records where zone_id = $1::text", z.ID); err != nil {
		return err
	}
	return t.addRecords(z.ID, 0, z.Records)
}

func (t *txn) upsertZone(z *pools.Zone, doc []byte) error {
	return t.upsert("zones", &z.Meta, doc,
		column{"name", "text", z.Name},
		column{"ttl", "int8", int64(z.TTL)},
		column{"serial", "int8", int64(z.Serial)})
}

// addRecords appends recs to zone id's rows after seq last.
func (t *txn) addRecords(id string, last int64, recs []pools.Record) error {
	if len(recs) == 0 {
		return nil
	}
	rows := make([][]any, len(recs))
	for i, r := range recs {
		rows[i] = []any{id, last + int64(i) + 1, r.Name, r.Type, r.Content, int64(r.TTL), r.Owner}
	}
	_, err := t.tx.CopyFrom(t.ctx, pgx.Identifier{"zone_records"}, recordColumns, pgx.CopyFromRows(rows))
	return err
}

// PatchZone stores z's row and the rows c changes: one row removed for
// each record of c.Removed (the first of equal ones; none is
// pools.ErrStale), c.Added appended.
func (t *txn) PatchZone(z, _ *pools.Zone, c pools.RecordChange) error {
	doc, err := zoneDoc(z)
	if err != nil {
		return err
	}
	if err := t.upsertZone(z, doc); err != nil {
		return err
	}
	for _, r := range c.Removed {
		tag, err := t.tx.Exec(t.ctx, `delete from zone_records where zone_id = $1::text and seq = (
			select seq from zone_records where zone_id = $1::text and name = $2 and type = $3 and content = $4
			and ttl = $5 and owner = $6 order by seq limit 1)`, z.ID, r.Name, r.Type, r.Content, int64(r.TTL), r.Owner)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return fmt.Errorf("zone %s holds no %s %s %q to remove: %w", z.ID, r.Name, r.Type, r.Content, pools.ErrStale)
		}
	}
	if len(c.Added) == 0 {
		return nil
	}
	var last int64
	if err := t.tx.QueryRow(t.ctx, "select coalesce(max(seq), 0) from zone_records where zone_id = $1::text", z.ID).Scan(&last); err != nil {
		return err
	}
	return t.addRecords(z.ID, last, c.Added)
}
