package embedded_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/pools/embedded"
	"github.com/glb-dns/glb/pools/storetest"
)

// TestRecordsMovedFromAnOlderStore: a file from before record rows keeps
// each zone's records inside the zone; Open moves them into rows, all of
// them in their order, and the zone then reads, changes and writes as any
// other.
func TestRecordsMovedFromAnOlderStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "glb.db")
	s, err := embedded.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var zones []*pools.Zone
	for _, name := range []string{"a.example.com", "b.example.com"} {
		z := storetest.Zone(name)
		for i := range 300 {
			z.Records = append(z.Records, pools.Record{Name: fmt.Sprintf("r%d.%s", 299-i, name), Type: "TXT", Content: fmt.Sprintf(`"%d"`, i), TTL: uint32(i % 3)})
		}
		o, err := s.Create(t.Context(), z)
		if err != nil {
			t.Fatal(err)
		}
		zones = append(zones, o.(*pools.Zone))
	}
	s.Close()

	// Make it the old layout: records inside the zones, no rows, no mark.
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		for _, z := range zones {
			doc, err := json.Marshal(z)
			if err != nil {
				return err
			}
			if err := tx.Bucket([]byte("zones")).Put([]byte(z.ID), doc); err != nil {
				return err
			}
		}
		if err := tx.DeleteBucket([]byte("zone.records")); err != nil {
			return err
		}
		return tx.Bucket([]byte("meta")).Delete([]byte("zone_records_moved"))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	s, err = embedded.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, z := range zones {
		got, err := s.Get(t.Context(), pools.KindZone, z.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.(*pools.Zone).Records, z.Records) {
			t.Fatalf("zone %s after the move holds %d records, not the %d stored, in order", z.Name, len(got.(*pools.Zone).Records), len(z.Records))
		}
	}
	z := zones[0]
	rm := z.Records[1]
	out, err := s.UpdateRecords(t.Context(), z.ID, z.Revision, pools.RecordChange{Removed: []pools.Record{rm}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	// Reopened, the rows are what counts: the settings hold no records,
	// and nothing is moved twice.
	s, err = embedded.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Get(t.Context(), pools.KindZone, z.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := slices.Delete(slices.Clone(z.Records), 1, 2); !slices.Equal(got.(*pools.Zone).Records, want) || !slices.Equal(out.Records, want) {
		t.Fatalf("zone after a change and a reopen: %d records, want %d", len(got.(*pools.Zone).Records), len(want))
	}
}
