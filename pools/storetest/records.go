package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/glb-dns/glb/pools"
)

// testUpdateRecords: a record change removes exactly the records named
// (the first of equal ones), appends the added in order, keeps every other
// record where it was, moves the revision and serial, refuses a stale
// revision or a record the zone does not hold with nothing written, and
// is audited with only what it removed and added. Every read of the zone
// (Get, List, Config, the change feed) sees the same records.
func testUpdateRecords(t *testing.T, c context.Context, s pools.Store) {
	f := newFixture(t, s)
	z := f.zone
	txt := func(n, v string) pools.Record {
		return pools.Record{Name: n + ".glb.example.com", Type: "TXT", Content: `"` + v + `"`}
	}
	a, b, dup := txt("a", "1"), txt("b", "2"), txt("a", "1")
	dup.TTL = 60
	z.Records = append(z.Records, a, b, txt("c", "3"), dup, txt("d", "4"))
	stored, err := s.Replace(c, z, 0)
	if err != nil {
		t.Fatal(err)
	}
	z = stored.(*pools.Zone)
	since, err := s.Revision(c)
	if err != nil {
		t.Fatal(err)
	}

	e1, e2 := txt("e", "5"), txt("e", "6")
	got, err := s.UpdateRecords(c, z.ID, z.Revision, pools.RecordChange{Removed: []pools.Record{b, dup}, Added: []pools.Record{e1, e2}})
	if err != nil {
		t.Fatal(err)
	}
	// dup differs from a by its TTL alone: a stays.
	want := []pools.Record{z.Records[0], a, txt("c", "3"), txt("d", "4"), e1, e2}
	if !slices.Equal(got.Records, want) {
		t.Fatalf("records after the change:\n%v\nwant\n%v", got.Records, want)
	}
	if got.Revision != z.Revision+1 || int32(got.Serial-z.Serial) <= 0 {
		t.Errorf("revision %d serial %d after %d and %d: both must advance", got.Revision, got.Serial, z.Revision, z.Serial)
	}
	read, err := s.Get(c, pools.KindZone, z.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameObject(t, "zone read back", read, got)
	cfg, err := s.Config(c)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(cfg.Zones, func(x pools.Zone) bool { return x.ID == z.ID }); i < 0 || !slices.Equal(cfg.Zones[i].Records, want) {
		t.Errorf("the configuration's zone does not hold the records written")
	}
	list, err := s.List(c, pools.KindZone, pools.Page{})
	if err != nil || len(list.Items) != 1 || !slices.Equal(list.Items[0].(*pools.Zone).Records, want) {
		t.Errorf("the listed zone does not hold the records written (%v)", err)
	}
	cs, err := s.Changes(c, since)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.Changes) != 1 || cs.Changes[0].Object == nil || !slices.Equal(cs.Changes[0].Object.(*pools.Zone).Records, want) {
		t.Errorf("the change feed does not carry the zone as written: %+v", cs.Changes)
	}

	// The audit entry holds the zone's settings and the change alone.
	entries, err := s.Audit(c, pools.AuditFilter{Kind: pools.KindZone, ObjectID: z.ID}, pools.Page{PerPage: 1})
	if err != nil || len(entries.Items) != 1 {
		t.Fatalf("audit: %v %v", entries, err)
	}
	e := entries.Items[0]
	var before, after pools.Zone
	if err := json.Unmarshal(e.Before, &before); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(e.After, &after); err != nil {
		t.Fatal(err)
	}
	if e.Action != pools.ActionUpdate || e.Revision == 0 ||
		!slices.Equal(before.Records, []pools.Record{b, dup}) || !slices.Equal(after.Records, []pools.Record{e1, e2}) ||
		before.Revision != z.Revision || after.Revision != got.Revision || after.Name != z.Name || after.Serial != got.Serial {
		t.Errorf("audit entry %s: before %s after %s; want the zone's settings with only the records removed and added", e.Action, e.Before, e.After)
	}

	// Of two equal records, a removal takes the first.
	if _, err := s.UpdateRecords(c, z.ID, 0, pools.RecordChange{Added: []pools.Record{txt("c", "3")}}); err != nil {
		t.Fatal(err)
	}
	got2, err := s.UpdateRecords(c, z.ID, 0, pools.RecordChange{Removed: []pools.Record{txt("c", "3")}})
	if err != nil {
		t.Fatal(err)
	}
	if want2 := append(slices.Delete(slices.Clone(want), 2, 3), txt("c", "3")); !slices.Equal(got2.Records, want2) {
		t.Errorf("records after removing the first of two equal ones: %v, want %v", got2.Records, want2)
	}

	// Refusals write nothing.
	rev, _ := s.Revision(c)
	if _, err := s.UpdateRecords(c, z.ID, got.Revision, pools.RecordChange{Added: []pools.Record{txt("f", "7")}}); !errors.Is(err, pools.ErrStale) {
		t.Errorf("a stale revision: %v, want ErrStale", err)
	}
	if _, err := s.UpdateRecords(c, z.ID, 0, pools.RecordChange{Removed: []pools.Record{txt("zz", "none")}, Added: []pools.Record{txt("f", "7")}}); !errors.Is(err, pools.ErrStale) {
		t.Errorf("removing a record the zone does not hold: %v, want ErrStale", err)
	}
	_, err = s.UpdateRecords(c, z.ID, 0, pools.RecordChange{Added: []pools.Record{{Name: "x.other.example", Type: "A", Content: "192.0.2.1"}, {Name: "y.glb.example.com", Type: "A", Content: "nope"}}})
	wantPaths(t, err, "records[6].name", "records[7].content")
	if _, err := s.UpdateRecords(c, "nozone", 0, pools.RecordChange{Added: []pools.Record{txt("f", "7")}}); !errors.Is(err, pools.ErrNotFound) {
		t.Errorf("an unknown zone: %v, want ErrNotFound", err)
	}
	if now, _ := s.Revision(c); now != rev {
		t.Errorf("refused changes moved the revision from %d to %d", rev, now)
	}
	read, _ = s.Get(c, pools.KindZone, z.ID)
	sameObject(t, "zone after refusals", read, got2)

	// Zone cuts: a record added below a cut is refused (the cut checked
	// against what is stored), and so is an NS that makes a cut over
	// records already there (the zone checked again).
	if _, err := s.UpdateRecords(c, z.ID, 0, pools.RecordChange{Added: []pools.Record{
		{Name: "sub.glb.example.com", Type: "NS", Content: "ns.sub.glb.example.com"},
		{Name: "ns.sub.glb.example.com", Type: "A", Content: "192.0.2.80"}}}); err != nil {
		t.Fatalf("a cut with glue refused: %v", err)
	}
	_, err = s.UpdateRecords(c, z.ID, 0, pools.RecordChange{Added: []pools.Record{txt("x.sub", "below")}})
	wantPaths(t, err, "records[8].name")
	_, err = s.UpdateRecords(c, z.ID, 0, pools.RecordChange{Added: []pools.Record{{Name: "d.glb.example.com", Type: "NS", Content: "ns.other.net"}}})
	wantPaths(t, err, "records[2].type")
	_, err = s.UpdateRecords(c, z.ID, 0, pools.RecordChange{Added: []pools.Record{{Name: "www.glb.example.com", Type: "NS", Content: "ns.other.net"}}})
	wantPaths(t, err, "records[8].name")

	// A zone written whole afterwards keeps what it is given, and its
	// deletion leaves nothing for a zone of the same id.
	read, _ = s.Get(c, pools.KindZone, z.ID)
	whole := read.(*pools.Zone)
	whole.Records = []pools.Record{whole.Records[0], txt("g", "8")}
	if _, err := s.Replace(c, whole, 0); err != nil {
		t.Fatal(err)
	}
	read, _ = s.Get(c, pools.KindZone, z.ID)
	if !slices.Equal(read.(*pools.Zone).Records, whole.Records) {
		t.Errorf("records after a whole write: %v", read.(*pools.Zone).Records)
	}
	if err := s.Delete(c, pools.KindLoadBalancer, f.lb.ID, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(c, pools.KindZone, z.ID, 0); err != nil {
		t.Fatal(err)
	}
	again := Zone("glb.example.com")
	again.ID = z.ID
	again.Records = nil
	created, err := s.Create(c, again)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(created.(*pools.Zone).Records); n != 0 {
		t.Errorf("a zone made again under a deleted one's id holds %d records", n)
	}
	read, _ = s.Get(c, pools.KindZone, z.ID)
	if n := len(read.(*pools.Zone).Records); n != 0 {
		t.Errorf("a zone made again under a deleted one's id reads back %d records", n)
	}
}
