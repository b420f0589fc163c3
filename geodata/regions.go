package geodata

import (
	_ "embed"
	"encoding/csv"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/glb-dns/glb/pools"
)

//go:embed regions.csv
var regionsCSV string

// country is one row of the region table. Every two-letter upper-case code
// has one, so that a code read from a database is interned by indexing an
// array instead of allocating a string per lookup; region and continent stay
// empty for codes the table does not list.
type country struct {
	code      string
	region    string
	continent string
	listed    bool
	// subs interns subdivision codes of this country (packed, see
	// packSub) and, for rows of the table, carries their region. It is
	// copy-on-write: lookups load it without a lock.
	subs atomic.Pointer[map[uint32]subdivision]
	// byName finds the subdivisions of the table by their English name,
	// as ip-location-db databases give them (state1); written only by
	// init.
	byName map[string]subdivision
}

type subdivision struct {
	code   string
	region string
}

var (
	countries [26 * 26]country
	// subsMu serialises the rare insertion of a subdivision code seen for
	// the first time.
	subsMu sync.Mutex
	// regionTableErr is the first problem found in regions.csv; a test
	// requires it to be nil.
	regionTableErr error
)

// maxSubsPerCountry bounds the intern table of one country so that a
// hostile database cannot grow it without end; ISO 3166-2 has fewer than
// 400 first-level codes for any country.
const maxSubsPerCountry = 1024

func init() {
	for i := range countries {
		countries[i].code = string([]byte{byte('A' + i/26), byte('A' + i%26)})
	}
	regionTableErr = loadRegionTable(regionsCSV)
}

// regionRows reads the table's rows: code, region, continent, name.
func regionRows(text string) ([][]string, error) {
	r := csv.NewReader(strings.NewReader(text))
	r.Comment = '#'
	r.FieldsPerRecord = 4
	return r.ReadAll()
}

func loadRegionTable(text string) error {
	rows, err := regionRows(text)
	if err != nil {
		return fmt.Errorf("regions.csv: %w", err)
	}
	var first error
	fail := func(format string, args ...any) {
		if first == nil {
			first = fmt.Errorf("regions.csv: "+format, args...)
		}
	}
	for _, row := range rows {
		code, region, continent := row[0], row[1], row[2]
		if !pools.IsRegion(region) {
			fail("%s: unknown region %q", code, region)
			continue
		}
		if !isContinent(continent) {
			fail("%s: unknown continent %q", code, continent)
			continue
		}
		cc, sub, hasSub := strings.Cut(code, "-")
		c := countryOf(cc)
		if c == nil {
			fail("%q is not an upper-case alpha-2 code", cc)
			continue
		}
		if !hasSub {
			if c.listed {
				fail("%s listed twice", code)
			}
			c.region, c.continent, c.listed = region, continent, true
			continue
		}
		key, ok := packSub(sub)
		if !ok {
			fail("%s: bad subdivision code", code)
			continue
		}
		if _, dup := c.subdivisions()[key]; dup {
			fail("%s listed twice", code)
		}
		s := c.addSub(key, subdivision{code: sub, region: region})
		if c.byName == nil {
			c.byName = make(map[string]subdivision)
		}
		c.byName[row[3]] = s
	}
	for _, row := range rows {
		cc, _, hasSub := strings.Cut(row[0], "-")
		if c := countryOf(cc); hasSub && c != nil && !c.listed {
			fail("%s has subdivisions but no country row", cc)
		}
	}
	return first
}

// continents are the seven continent codes GeoIP databases use; a record's
// code is interned by searching this list.
var continents = [...]string{"AF", "AN", "AS", "EU", "NA", "OC", "SA"}

func isContinent(s string) bool { return internContinent(s) != "" }

func internContinent[T string | []byte](b T) string {
	if len(b) != 2 {
		return ""
	}
	for _, c := range continents {
		if c[0] == b[0] && c[1] == b[1] {
			return c
		}
	}
	return ""
}

// countryOf returns the table row of a two-letter upper-case code, nil for
// anything else. The argument is a string or a []byte aliasing a database.
func countryOf[T string | []byte](code T) *country {
	if len(code) != 2 {
		return nil
	}
	a, b := code[0]-'A', code[1]-'A'
	if a >= 26 || b >= 26 {
		return nil
	}
	return &countries[int(a)*26+int(b)]
}

// packSub packs a subdivision code of one to three upper-case letters or
// digits (ISO 3166-2's second part) into a map key.
func packSub[T string | []byte](b T) (uint32, bool) {
	if len(b) == 0 || len(b) > 3 {
		return 0, false
	}
	var k uint32
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return 0, false
		}
		k = k<<8 | uint32(c)
	}
	return k, true
}

func (c *country) subdivisions() map[uint32]subdivision {
	if m := c.subs.Load(); m != nil {
		return *m
	}
	return nil
}

func (c *country) addSub(key uint32, s subdivision) subdivision {
	subsMu.Lock()
	defer subsMu.Unlock()
	old := c.subdivisions()
	if have, ok := old[key]; ok {
		return have
	}
	if len(old) >= maxSubsPerCountry {
		return s
	}
	m := make(map[uint32]subdivision, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[key] = s
	c.subs.Store(&m)
	return s
}

// internSub returns the interned code of a subdivision of c and its region
// ("" when the table does not split c). Only the first sighting of a code
// allocates.
func (c *country) internSub(b []byte) subdivision {
	key, ok := packSub(b)
	if !ok {
		return subdivision{}
	}
	if s, ok := c.subdivisions()[key]; ok {
		return s
	}
	return c.addSub(key, subdivision{code: string(b)})
}

// subByName returns the subdivision of c named name in regions.csv; the
// zero subdivision for a name the table does not list. It does not
// allocate.
func (c *country) subByName(name []byte) subdivision {
	return c.byName[string(name)]
}

// RegionOf returns the region code of a country (ISO 3166-1 alpha-2) and,
// for the United States and Canada, its subdivision (the ISO 3166-2 code
// without the country, e.g. "CA" for California); "" for an unknown
// country. An unknown or empty subdivision falls back to the country's
// region.
func RegionOf(country, subdivision string) string {
	c := countryOf(country)
	if c == nil {
		return ""
	}
	if subdivision != "" {
		if key, ok := packSub(subdivision); ok {
			if s := c.subdivisions()[key]; s.region != "" {
				return s.region
			}
		}
	}
	return c.region
}

// ContinentOf returns the continent code of a country, "" when unknown.
func ContinentOf(country string) string {
	if c := countryOf(country); c != nil {
		return c.continent
	}
	return ""
}

// RegionRow is one row of the region table: a country, or a subdivision
// of a country split between regions (Code "US-CA"), and its region.
type RegionRow struct {
	Code, Region, Continent, Name string
}

// RegionTable returns the rows of the region table in its order: the map
// the console colours and GET /api/v1/regions lists.
func RegionTable() []RegionRow {
	rows, err := regionRows(regionsCSV)
	if err != nil {
		return nil // loadRegionTable reported it at init; a test requires none
	}
	out := make([]RegionRow, len(rows))
	for i, row := range rows {
		out[i] = RegionRow{Code: row[0], Region: row[1], Continent: row[2], Name: row[3]}
	}
	return out
}
