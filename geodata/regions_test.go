package geodata

import (
	"testing"

	"github.com/glb-dns/glb/pools"
)

func TestRegionTableLoads(t *testing.T) {
	t.Parallel()
	if regionTableErr != nil {
		t.Fatal(regionTableErr)
	}
	perRegion := map[string]int{}
	listed := 0
	for i := range countries {
		if c := &countries[i]; c.listed {
			listed++
			perRegion[c.region]++
			if c.continent == "" {
				t.Errorf("%s has no continent", c.code)
			}
		}
		for _, s := range countries[i].subdivisions() {
			if s.region != "" { // codes interned from databases by other tests
				perRegion[s.region]++
			}
		}
	}
	// ISO 3166-1 assigns 249 codes; GeoIP databases add XK (Kosovo).
	if listed != 250 {
		t.Errorf("%d countries listed, want the 249 of ISO 3166-1 and XK", listed)
	}
	for _, r := range pools.Regions {
		if perRegion[r] == 0 {
			t.Errorf("region %s has no country or subdivision", r)
		}
	}
	if len(perRegion) != len(pools.Regions) {
		t.Errorf("countries map to %d regions, want %d", len(perRegion), len(pools.Regions))
	}
}

func TestRegionOf(t *testing.T) {
	t.Parallel()
	cases := []struct{ country, sub, want string }{
		// A US state and a Canadian province on each side.
		{"US", "CA", "WNAM"}, {"US", "WA", "WNAM"}, {"US", "NY", "ENAM"}, {"US", "TX", "ENAM"},
		{"CA", "BC", "WNAM"}, {"CA", "AB", "WNAM"}, {"CA", "ON", "ENAM"}, {"CA", "QC", "ENAM"},
		// The country alone, or an unknown subdivision, gets the
		// country's row.
		{"US", "", "ENAM"}, {"US", "ZZ", "ENAM"}, {"CA", "", "ENAM"},
		// At least one country per region.
		{"MX", "", "ENAM"},
		{"GB", "ENG", "WEU"}, {"DE", "", "WEU"}, {"FR", "", "WEU"},
		{"PL", "", "EEU"}, {"RU", "", "EEU"}, {"UA", "", "EEU"},
		{"CO", "", "NSAM"}, {"VE", "", "NSAM"},
		{"BR", "", "SSAM"}, {"AR", "", "SSAM"}, {"CL", "", "SSAM"},
		{"AU", "", "OC"}, {"NZ", "", "OC"},
		{"AE", "", "ME"}, {"SA", "", "ME"}, {"IL", "", "ME"},
		{"EG", "", "NAF"}, {"MA", "", "NAF"}, {"NG", "", "NAF"},
		{"ZA", "", "SAF"}, {"KE", "", "SAF"},
		{"IN", "", "SAS"}, {"PK", "", "SAS"},
		{"SG", "", "SEAS"}, {"ID", "", "SEAS"}, {"VN", "", "SEAS"},
		{"JP", "", "NEAS"}, {"CN", "", "NEAS"}, {"KR", "", "NEAS"},
		// Not countries.
		{"ZZ", "", ""}, {"us", "CA", ""}, {"USA", "", ""}, {"", "", ""},
	}
	for _, c := range cases {
		if got := RegionOf(c.country, c.sub); got != c.want {
			t.Errorf("RegionOf(%q, %q) = %q, want %q", c.country, c.sub, got, c.want)
		}
	}
}

func TestContinentOf(t *testing.T) {
	t.Parallel()
	for country, want := range map[string]string{"US": "NA", "BR": "SA", "DE": "EU", "JP": "AS", "AU": "OC", "ZA": "AF", "AQ": "AN", "ZZ": "", "x": ""} {
		if got := ContinentOf(country); got != want {
			t.Errorf("ContinentOf(%q) = %q, want %q", country, got, want)
		}
	}
}

func TestInternSubdivision(t *testing.T) {
	fr := countryOf("FR")
	first := fr.internSub([]byte("IDF"))
	if first.code != "IDF" || first.region != "" {
		t.Fatalf("internSub(IDF) = %+v", first)
	}
	code := []byte("IDF")
	if n := testing.AllocsPerRun(100, func() { fr.internSub(code) }); n != 0 {
		t.Errorf("interning a known code: %v allocations, want 0", n)
	}
	if got := countryOf("US").internSub([]byte("CA")); got.region != "WNAM" {
		t.Errorf("US-CA interned as %+v, want region WNAM", got)
	}
	for _, bad := range []string{"", "TOOLONG", "a-b"} {
		if got := fr.internSub([]byte(bad)); got != (subdivision{}) {
			t.Errorf("internSub(%q) = %+v, want nothing", bad, got)
		}
	}
}

func TestRegionTableRejectsBadRows(t *testing.T) {
	// Not parallel: loadRegionTable writes the shared country table, so
	// it is fed rows that fail before touching it.
	for _, text := range []string{
		"XX,NOPE,EU,unknown region\n",
		"XX,WEU,XX,unknown continent\n",
		"X1,WEU,EU,bad code\n",
		"US-TOOLONG,WNAM,NA,bad subdivision\n",
		"XX,WEU,EU\n",
	} {
		if err := loadRegionTable(text); err == nil {
			t.Errorf("loadRegionTable(%q) accepted it", text)
		}
	}
}

// The API accepts exactly the countries the region table places: a code
// accepted there but missing here would never match a client.
func TestRegionTableListsTheAcceptedCountries(t *testing.T) {
	t.Parallel()
	accepted := map[string]bool{}
	for _, c := range pools.CountryCodes() {
		accepted[c] = true
		if !countries[int(c[0]-'A')*26+int(c[1]-'A')].listed {
			t.Errorf("%s is accepted by validation but not in regions.csv", c)
		}
	}
	for i := range countries {
		if c := &countries[i]; c.listed && !accepted[c.code] {
			t.Errorf("%s is in regions.csv but refused by validation", c.code)
		}
	}
}
