package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/glb-dns/glb/pools"
)

// testSafetyRules: the global rules read as zero (revision 0) until
// written; a write validates every field and stores nothing when one is
// bad, takes the configuration revision, is audited, and honours its
// precondition, so that of two writers holding the same revision one
// wins and the other is stale.
func testSafetyRules(t *testing.T, c context.Context, s pools.Store) {
	got, err := s.SafetyRules(c)
	if err != nil || got != (pools.SafetyRules{}) {
		t.Fatalf("never written: %+v, %v", got, err)
	}
	_, err = s.PutSafetyRules(c, pools.SafetyRules{MaxShiftedZones: -1, MaxShiftedPools: -2, MinServingLoadBalancersPercent: 101}, -1)
	var ve *pools.ValidationError
	if !errors.As(err, &ve) || len(ve.Errors) != 3 {
		t.Fatalf("bad values: %v, want one error per field", err)
	}
	if _, err := s.PutSafetyRules(c, pools.SafetyRules{MaxShiftedZones: 1}, 5); !errors.Is(err, pools.ErrStale) {
		t.Fatalf("If-Match 5 on never written rules: %v, want stale", err)
	}
	if got, _ := s.SafetyRules(c); got.Revision != 0 {
		t.Fatalf("a refused write was stored: %+v", got)
	}
	put, err := s.PutSafetyRules(c, pools.SafetyRules{MaxShiftedZones: 2, MaxShiftedPools: 3, MinServingLoadBalancersPercent: 50, Revision: 99}, 0)
	if err != nil {
		t.Fatal(err)
	}
	rev, _ := s.Revision(c)
	if put.Revision != rev || put.MaxShiftedZones != 2 || put.MaxShiftedPools != 3 || put.MinServingLoadBalancersPercent != 50 || put.ModifiedOn == nil {
		t.Fatalf("stored %+v at revision %d", put, rev)
	}
	got, err = s.SafetyRules(c)
	if err != nil || got.Revision != put.Revision || got.MaxShiftedPools != 3 || !got.ModifiedOn.Equal(*put.ModifiedOn) {
		t.Fatalf("read back %+v, %v; wrote %+v", got, err, put)
	}
	if _, err := s.PutSafetyRules(c, pools.SafetyRules{}, 0); !errors.Is(err, pools.ErrStale) {
		t.Fatalf("If-Match 0 (never written) over written rules: %v, want stale", err)
	}
	errs := make([]error, 2)
	atOnce(2, func(i int) {
		_, errs[i] = s.PutSafetyRules(c, pools.SafetyRules{MaxShiftedZones: 10 + i}, put.Revision)
	})
	if !oneWins(errs) {
		t.Fatalf("two writers over revision %d: %v", put.Revision, errs)
	}
	audit, err := s.Audit(c, pools.AuditFilter{Kind: pools.KindSafetyRules}, pools.Page{})
	if err != nil {
		t.Fatal(err)
	}
	if len(audit.Items) != 2 || audit.Items[1].Action != pools.ActionCreate || audit.Items[0].Action != pools.ActionUpdate ||
		audit.Items[0].ObjectID != pools.SafetyRulesID || string(audit.Items[1].Before) != "null" {
		t.Fatalf("audit %+v", audit.Items)
	}
}
