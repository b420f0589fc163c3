package pools

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// RecordChange is a write of some of a zone's static records: Removed are
// taken out (each matched by value, once), then Added are appended. It is
// what a DNS UPDATE makes, so that a zone of 10,000 records costs the
// store what the update changed, not the zone.
type RecordChange struct {
	Removed []Record
	Added   []Record
}

// RecordTx is a Tx whose store keeps a zone's records apart from its
// settings, one row each, so that a record change writes only the rows it
// changes. A Tx without it is given the whole zone (Put).
type RecordTx interface {
	Tx
	// PatchZone stores z's settings and applies c to the stored records;
	// old is the zone before, z.Records the records after.
	PatchZone(z, old *Zone, c RecordChange) error
}

// PatchZone records the change and passes it to the store: a RecordTx
// writes the rows, any other Tx the whole zone. The audit entry holds the
// zone's settings with only the records removed (before) and added
// (after): a zone's records in full, twice, would make every UPDATE of a
// large zone cost the zone in the log.
func (r *Recorder) PatchZone(z, old *Zone, c RecordChange) error {
	before, after := *old, *z
	before.Records, after.Records = nonNil(slices.Clone(c.Removed)), nonNil(slices.Clone(c.Added))
	r.changes = append(r.changes, recorded{before: &before, after: &after})
	if rt, ok := r.Tx.(RecordTx); ok {
		return rt.PatchZone(z, old, c)
	}
	return r.Tx.Put(z, old)
}

// UpdateRecordsIn applies c to the static records of zone zoneID inside
// tx; ifRevision > 0 must be its revision (else ErrStale). A record to
// remove that the zone does not hold is ErrStale too: the caller worked
// from another state. What changed is validated, with the zone-wide rules
// it touches: the added records against the zone's cuts, and the whole
// zone again when an NS below the apex or a DS comes or goes (a cut
// moves). It returns the zone after the write and the new global
// revision.
func UpdateRecordsIn(tx *Recorder, zoneID string, ifRevision int64, c RecordChange, now time.Time) (*Zone, int64, error) {
	rev, err := tx.BumpRevision()
	if err != nil {
		return nil, 0, err
	}
	now = StoreTime(now)
	o, err := fetch(tx, KindZone, zoneID, ifRevision)
	if err != nil {
		return nil, 0, err
	}
	old := o.(*Zone)
	z := *old
	recs := slices.Clone(old.Records)
	for _, r := range c.Removed {
		i := slices.Index(recs, r)
		if i < 0 {
			return nil, 0, fmt.Errorf("zone %s holds no %s %s %q to remove: %w", zoneID, r.Name, r.Type, r.Content, ErrStale)
		}
		recs = slices.Delete(recs, i, i+1)
	}
	kept := len(recs)
	z.Records = append(recs, c.Added...)

	var e errs
	nameOK := checkHostname(z.Name, false) == ""
	for i, r := range c.Added {
		z.checkRecord(&e, fmt.Sprintf("records[%d]", kept+i), r, nameOK)
	}
	if movesCut(&z, c) {
		z.checkCuts(&txRefs{tx: tx}, &e)
	} else {
		cuts := old.Cuts()
		for i, r := range c.Added {
			checkAtCut(&e, fmt.Sprintf("records[%d]", kept+i), r, cuts)
		}
	}
	if err := e.err(); err != nil {
		return nil, 0, err
	}
	z.Revision, z.ModifiedOn = old.Revision+1, now
	z.Serial = NextSerial(old.Serial, now)
	if err := tx.PatchZone(&z, old, c); err != nil {
		return nil, 0, err
	}
	return &z, rev, nil
}

// movesCut reports whether c adds or removes a record that makes or
// marks a zone cut of z: an NS below the apex, or a DS.
func movesCut(z *Zone, c RecordChange) bool {
	apex := CanonicalName(z.Name)
	for _, set := range [][]Record{c.Removed, c.Added} {
		for _, r := range set {
			switch strings.ToUpper(r.Type) {
			case "DS":
				return true
			case "NS":
				if CanonicalName(r.Name) != apex {
					return true
				}
			}
		}
	}
	return false
}
