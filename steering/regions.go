package steering

import (
	"math"

	"github.com/glb-dns/glb/pools"
)

const numRegions = 13

// regionCentres are rough centres (radians) of Cloudflare's regions, in
// pools.Regions order; dynamic_latency uses them to find the nearest region
// with RTT data when the client's own region has none.
var regionCentres = func() [numRegions][2]float64 {
	deg := [numRegions][2]float64{
		{40, -115}, // WNAM
		{40, -80},  // ENAM
		{48, 5},    // WEU
		{52, 25},   // EEU
		{5, -70},   // NSAM
		{-25, -60}, // SSAM
		{-25, 140}, // OC
		{28, 45},   // ME
		{25, 10},   // NAF
		{-15, 25},  // SAF
		{22, 78},   // SAS
		{5, 110},   // SEAS
		{35, 125},  // NEAS
	}
	var out [numRegions][2]float64
	for i, c := range deg {
		out[i] = [2]float64{c[0] * math.Pi / 180, c[1] * math.Pi / 180}
	}
	return out
}()

func init() {
	if len(pools.Regions) != numRegions {
		panic("steering: region table out of step with pools.Regions")
	}
}

// regionIndex returns the index of a region code in pools.Regions, or -1.
// A linear scan over 13 short strings beats a map lookup here.
func regionIndex(code string) int {
	for i, r := range pools.Regions {
		if r == code {
			return i
		}
	}
	return -1
}

const earthRadiusKm = 6371.0

// distance is the great-circle angle (radians) between two points given in
// radians (haversine formula).
func distance(lat1, lon1, lat2, lon2 float64) float64 {
	sdlat := math.Sin((lat2 - lat1) / 2)
	sdlon := math.Sin((lon2 - lon1) / 2)
	a := sdlat*sdlat + math.Cos(lat1)*math.Cos(lat2)*sdlon*sdlon
	return 2 * math.Asin(math.Sqrt(min(a, 1)))
}

// unitVector places a latitude/longitude (degrees) on the unit sphere.
func unitVector(lat, lon float64) [3]float64 {
	slat, clat := math.Sincos(lat * math.Pi / 180)
	slon, clon := math.Sincos(lon * math.Pi / 180)
	return [3]float64{clat * clon, clat * slon, slat}
}

// chordKm converts a proximity key (1 - cos(angle)) to kilometres.
func chordKm(key float64) float64 {
	return math.Acos(max(-1, min(1, 1-key))) * earthRadiusKm
}
