package postgres

import (
	"context"

	"github.com/glb-dns/glb/pools"
)

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
