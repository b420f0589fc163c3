package geodata

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// testNet is one network of a generated database, shaped as a GeoIP2 City
// record. Empty fields are left out of the record.
type testNet struct {
	cidr       string
	country    string
	registered string // registered_country
	continent  string
	sub        string // first subdivision
	lat, lon   float64
	coords     bool
}

// cityNets are the networks of the generated City database: several
// countries, IPv4 and IPv6, with and without coordinates, US and Canadian
// subdivisions, a nested more specific network, a record with only a
// registered country.
var cityNets = []testNet{
	{cidr: "1.2.0.0/16", country: "US", continent: "NA", sub: "CA", lat: 37.77, lon: -122.42, coords: true},
	{cidr: "1.3.0.0/16", country: "US", continent: "NA", sub: "NY", lat: 40.71, lon: -74.01, coords: true},
	{cidr: "2.0.0.0/8", country: "DE", continent: "EU", lat: 51.3, lon: 9.5, coords: true},
	{cidr: "2.16.0.0/16", country: "FR", continent: "EU"},
	{cidr: "3.0.0.0/24", country: "JP", continent: "AS", sub: "13", lat: 35.69, lon: 139.69, coords: true},
	{cidr: "4.0.0.0/24", registered: "BR"},
	{cidr: "5.0.0.0/24", country: "CA", continent: "NA", sub: "BC", lat: 49.28, lon: -123.12, coords: true},
	{cidr: "5.0.1.0/24", country: "CA", continent: "NA", sub: "ON", lat: 43.65, lon: -79.38, coords: true},
	{cidr: "10.0.0.0/8", country: "US", continent: "NA", sub: "WA", lat: 47.6, lon: -122.3, coords: true},
	{cidr: "2001:db8:1::/48", country: "AU", continent: "OC", sub: "NSW", lat: -33.87, lon: 151.21, coords: true},
	{cidr: "2001:db8:2::/48", country: "ZA", continent: "AF"},
	{cidr: "2001:db8:3::/64", country: "GB", continent: "EU", sub: "ENG", lat: 51.5, lon: -0.13, coords: true},
}

func names(s string) mmdbtype.Map {
	// Several languages, as real databases carry, so that lookups must
	// skip them.
	return mmdbtype.Map{
		"de": mmdbtype.String(s + " (de)"), "en": mmdbtype.String(s),
		"es": mmdbtype.String(s + " (es)"), "ja": mmdbtype.String(s + " (ja)"),
	}
}

func (n testNet) record() mmdbtype.Map {
	m := mmdbtype.Map{"city": mmdbtype.Map{"geoname_id": mmdbtype.Uint32(1), "names": names("Some City")}}
	if n.country != "" {
		m["country"] = mmdbtype.Map{"geoname_id": mmdbtype.Uint32(2), "iso_code": mmdbtype.String(n.country), "names": names(n.country)}
	}
	reg := n.registered
	if reg == "" {
		reg = n.country
	}
	if reg != "" {
		m["registered_country"] = mmdbtype.Map{"iso_code": mmdbtype.String(reg), "names": names(reg)}
	}
	if n.continent != "" {
		m["continent"] = mmdbtype.Map{"code": mmdbtype.String(n.continent), "geoname_id": mmdbtype.Uint32(3), "names": names(n.continent)}
	}
	if n.sub != "" {
		m["subdivisions"] = mmdbtype.Slice{
			mmdbtype.Map{"iso_code": mmdbtype.String(n.sub), "names": names(n.sub)},
			mmdbtype.Map{"iso_code": mmdbtype.String("ZZZ"), "names": names("smaller")},
		}
	}
	if n.coords {
		m["location"] = mmdbtype.Map{
			"accuracy_radius": mmdbtype.Uint16(20),
			"latitude":        mmdbtype.Float64(n.lat),
			"longitude":       mmdbtype.Float64(n.lon),
			"time_zone":       mmdbtype.String("Etc/UTC"),
		}
	}
	return m
}

// writeDB writes a database of the given type and networks to path, by
// renaming a complete file over it as a careful operator would.
func writeDB(t testing.TB, path, dbType string, nets []testNet) {
	t.Helper()
	writeNets(t, path, mmdbwriter.Options{
		DatabaseType:            dbType,
		Description:             map[string]string{"en": "glb test database"},
		Languages:               []string{"de", "en", "es", "ja"},
		RecordSize:              28,
		IncludeReservedNetworks: true,
	}, nets, testNet.record)
}

// writeNets writes a database of the networks, each as record makes it.
func writeNets(t testing.TB, path string, opts mmdbwriter.Options, nets []testNet, record func(testNet) mmdbtype.Map) {
	t.Helper()
	tree, err := mmdbwriter.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nets {
		_, ipnet, err := net.ParseCIDR(n.cidr)
		if err != nil {
			t.Fatal(err)
		}
		if err := tree.Insert(ipnet, record(n)); err != nil {
			t.Fatalf("insert %s: %v", n.cidr, err)
		}
	}
	writeFileAtomic(t, path, func(f *os.File) error {
		_, err := tree.WriteTo(f)
		return err
	})
}

func writeFileAtomic(t testing.TB, path string, write func(*os.File) error) {
	t.Helper()
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		t.Fatal(err)
	}
	if err := write(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		t.Fatal(err)
	}
}

// newTestResolver writes the City test database and opens it.
func newTestResolver(t testing.TB) (*Resolver, string) {
	return cityResolver(t, cityNets)
}

// cityResolver writes a City database of nets and opens it, not polling
// the file.
func cityResolver(t testing.TB, nets []testNet) (*Resolver, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "city.mmdb")
	writeDB(t, path, "GeoIP2-City", nets)
	r, err := NewResolver(Config{Path: path, PollInterval: -1, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	return r, path
}
