package api

import (
	"net/http"

	"github.com/glb-dns/glb/geodata"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

// Region is one of the thirteen client regions: where geo steering, the
// preview and the traffic counts place a client. Countries lists the
// countries that belong to it whole; Subdivisions the parts of a country
// split between two regions (the United States and Canada, by ISO 3166-2
// code) that belong to it.
type Region struct {
	Code         string   `json:"code"`
	Name         string   `json:"name"`
	Latitude     float64  `json:"latitude"`
	Longitude    float64  `json:"longitude"`
	Countries    []string `json:"countries"`
	Subdivisions []string `json:"subdivisions"`
}

// regions is the table GET /regions serves; it never changes while the
// binary runs.
var regions = func() []Region {
	out := make([]Region, len(pools.Regions))
	at := map[string]*Region{}
	for i, code := range pools.Regions {
		loc, _ := steering.Place(code, "")
		out[i] = Region{Code: code, Name: pools.RegionNames[code], Latitude: loc.Latitude, Longitude: loc.Longitude,
			Countries: []string{}, Subdivisions: []string{}}
		at[code] = &out[i]
	}
	for _, row := range geodata.RegionTable() {
		r := at[row.Region]
		if len(row.Code) == 2 {
			r.Countries = append(r.Countries, row.Code)
		} else {
			r.Subdivisions = append(r.Subdivisions, row.Code)
		}
	}
	return out
}()

// listRegions serves GET /regions: the regions with their names, centres
// and countries, for maps and tools that place clients the way glb does.
func (s *server) listRegions(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, item{Result: regions})
}
