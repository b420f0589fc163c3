package api_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/geodata"
	"github.com/glb-dns/glb/pools"
)

// TestRegionsListTheTable: GET /regions names the thirteen regions in
// order, places every accepted country in exactly the region geo steering
// gives it, and lists the subdivisions of split countries where their
// rows put them.
func TestRegionsListTheTable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	r := e.do("GET", "/api/v1/regions", nil)
	if r.status != http.StatusOK {
		t.Fatalf("GET /regions: %d %s", r.status, r.body)
	}
	var got struct{ Result []api.Region }
	r.json(t, &got)
	if len(got.Result) != len(pools.Regions) {
		t.Fatalf("%d regions, want %d", len(got.Result), len(pools.Regions))
	}
	home := map[string]string{}
	for i, reg := range got.Result {
		if reg.Code != pools.Regions[i] || reg.Name == "" || reg.Latitude == 0 && reg.Longitude == 0 {
			t.Errorf("region %d: %+v", i, reg)
		}
		for _, c := range reg.Countries {
			if was, twice := home[c]; twice {
				t.Errorf("%s in %s and %s", c, was, reg.Code)
			}
			home[c] = reg.Code
		}
		for _, sub := range reg.Subdivisions {
			if want := geodata.RegionOf(sub[:2], sub[3:]); want != reg.Code {
				t.Errorf("%s listed in %s, RegionOf says %s", sub, reg.Code, want)
			}
		}
	}
	for _, c := range pools.CountryCodes() {
		if want := geodata.RegionOf(c, ""); home[c] != want {
			t.Errorf("%s listed in %q, RegionOf says %q", c, home[c], want)
		}
	}
	wnam := got.Result[slices.Index(pools.Regions, "WNAM")]
	if !slices.Contains(wnam.Subdivisions, "US-CA") || slices.Contains(wnam.Subdivisions, "US-NY") {
		t.Errorf("WNAM subdivisions %v: want US-CA and not US-NY", wnam.Subdivisions)
	}
}
