package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/glb-dns/glb/pools"
)

// TestPaginationEdges: total_pages rounds up and no further (4 objects
// in pages of 2 are 2 pages, 5 are 3, 0 are 0), and per_page accepts its
// bound, 1000.
func TestPaginationEdges(t *testing.T) {
	e := parallelEnv(t, nil)
	pages := func(perPage int) int {
		var out listPage[any]
		r := e.do("GET", fmt.Sprintf("/api/v1/networks?per_page=%d", perPage), nil)
		if r.status != http.StatusOK {
			t.Fatalf("per_page=%d: %d %s", perPage, r.status, r.body)
		}
		r.json(t, &out)
		return out.ResultInfo.TotalPages
	}
	if got := pages(2); got != 0 {
		t.Errorf("no objects: %d pages, want 0", got)
	}
	for i := range 4 {
		e.create(pools.KindNetwork, networkBody(fmt.Sprintf("10.7.%d.0/24", i)))
	}
	for perPage, want := range map[int]int{1: 4, 2: 2, 3: 2, 4: 1, 1000: 1} {
		if got := pages(perPage); got != want {
			t.Errorf("4 objects, per_page=%d: %d pages, want %d", perPage, got, want)
		}
	}
	e.do("GET", "/api/v1/networks?per_page=1001", nil).problem(t, http.StatusBadRequest)
	e.do("GET", "/api/v1/networks?per_page=0", nil).problem(t, http.StatusBadRequest)
}
