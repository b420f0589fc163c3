package postgres_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/pools/postgres"
	"github.com/glb-dns/glb/pools/postgres/pgtest"
)

// TestHealthReportsFromManyNodes: nodes of one database report the same
// transitions at once, in different orders; each is recorded once and no
// report fails (no deadlock between their row locks).
func TestHealthReportsFromManyNodes(t *testing.T) {
	t.Parallel()
	first, url := pgtest.NewStore(t)
	stores := []*postgres.Store{first}
	for range 3 {
		s, err := postgres.Open(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores = append(stores, s)
	}
	var down []pools.HealthTransition
	for i := range 20 {
		down = append(down, pools.HealthTransition{Pool: "p", Origin: fmt.Sprintf("o%02d", i), Reason: "refused"})
	}
	const rounds = 5
	var wg sync.WaitGroup
	errs := make(chan error, len(stores)*rounds)
	for n, s := range stores {
		ts := slices.Clone(down)
		if n%2 == 1 {
			slices.Reverse(ts)
		}
		wg.Go(func() {
			for range rounds {
				errs <- s.RecordHealth(t.Context(), time.Now(), ts)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("report: %v", err)
		}
	}
	res, err := first.Audit(t.Context(), pools.AuditFilter{Kind: pools.KindHealth}, pools.Page{PerPage: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if res.TotalCount != len(down) {
		t.Errorf("%d health entries for %d transitions", res.TotalCount, len(down))
	}
}
