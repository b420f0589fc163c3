package geodata

import (
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"

	"github.com/glb-dns/glb/pools"
)

// asnNets are the networks of the generated ASN databases: the AS
// number rides in testNet.lat (the test nets carry no other use for it
// here). 1.2.3.0/24 sits inside 1.2.0.0/16 with another AS.
var asnNets = []testNet{
	{cidr: "1.2.0.0/16", lat: 64500},
	{cidr: "1.2.3.0/24", lat: 64501},
	{cidr: "2.0.0.0/8", lat: 4200000000},
	{cidr: "10.0.0.0/8", lat: 64510},
	{cidr: "2001:db8:1::/48", lat: 64520},
}

// asnRecord is n as GeoLite2 ASN (and ip-location-db's asn files) write
// it.
func (n testNet) asnRecord() mmdbtype.Map {
	return mmdbtype.Map{
		"autonomous_system_number":       mmdbtype.Uint32(uint32(n.lat)),
		"autonomous_system_organization": mmdbtype.String("Example Networks AS" + n.cidr),
	}
}

// writeASNDB writes an ASN database of MaxMind's type GeoLite2-ASN.
func writeASNDB(t testing.TB, path string, nets []testNet) {
	t.Helper()
	writeNets(t, path, mmdbwriter.Options{DatabaseType: "GeoLite2-ASN", RecordSize: 24, IncludeReservedNetworks: true},
		nets, testNet.asnRecord)
}

// asnResolver opens the City test database with an ASN database of nets.
func asnResolver(t testing.TB, nets []testNet) (*Resolver, string) {
	t.Helper()
	dir := t.TempDir()
	city, asn := filepath.Join(dir, "city.mmdb"), filepath.Join(dir, "asn.mmdb")
	writeDB(t, city, "GeoIP2-City", cityNets)
	writeASNDB(t, asn, nets)
	r, err := NewResolver(Config{Path: city, ASNPath: asn, PollInterval: -1, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	return r, asn
}

func TestResolveASN(t *testing.T) {
	t.Parallel()
	r, _ := asnResolver(t, asnNets)
	nets, err := NewNetworks([]pools.Network{{CIDR: "10.1.0.0/16", Country: "DE", Zone: "corp"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		client  string
		asn     uint32
		country string
		prefix  int
	}{
		{"1.2.9.9/32", 64500, "US", 16},
		{"1.2.3.4/32", 64501, "US", 16}, // the ASN's /24 does not narrow the scope
		{"1.2.3.0/24", 64501, "US", 16},
		{"2.1.1.1/32", 4200000000, "DE", 12}, // a 4-byte AS number (2.16/16 is FR)
		{"10.1.2.3/32", 64510, "DE", 16},     // operator networks do not move the AS
		{"3.0.0.1/32", 0, "JP", 24},          // in the City database only
		{"2001:db8:1::1/128", 64520, "AU", 48},
		{"::ffff:1.2.9.9/128", 64500, "US", 16},
	} {
		got := r.Resolve(netip.MustParsePrefix(c.client), nets)
		if got.ASN != c.asn || got.Country != c.country || got.Prefix != c.prefix {
			t.Errorf("%s: ASN %d country %q prefix %d, want %d %q %d", c.client, got.ASN, got.Country, got.Prefix, c.asn, c.country, c.prefix)
		}
	}
	// An AS number alone does not locate a client.
	only := newASNOnly(t)
	got := only.ResolveAddr(addr("1.2.3.4"), nil)
	if got.ASN != 64501 || got.Known() || got.Country != "" {
		t.Errorf("ASN database alone: %+v, want AS 64501, not known", got)
	}
	// Without an ASN database, every client is AS 0.
	plain, _ := newTestResolver(t)
	if got := plain.ResolveAddr(addr("1.2.3.4"), nil); got.ASN != 0 || got.Country != "US" {
		t.Errorf("no ASN database: %+v", got)
	}
}

func newASNOnly(t *testing.T) *Resolver {
	t.Helper()
	path := filepath.Join(t.TempDir(), "asn.mmdb")
	writeASNDB(t, path, asnNets)
	r, err := NewResolver(Config{ASNPath: path, PollInterval: -1, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if dbs := r.Databases(); len(dbs) != 1 || dbs[0].Schema != SchemaASN || dbs[0].Type != "GeoLite2-ASN" {
		t.Fatalf("Databases: %+v", dbs)
	}
	return r
}

// TestASNIPLocationDB reads ip-location-db's asn files, one per family.
func TestASNIPLocationDB(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	v4, v6 := filepath.Join(dir, "asn-ipv4.mmdb"), filepath.Join(dir, "asn-ipv6.mmdb")
	writeNets(t, v4, mmdbwriter.Options{DatabaseType: "asn ipv4", IPVersion: 4, RecordSize: 24, IncludeReservedNetworks: true},
		asnNets[:4], testNet.asnRecord)
	writeNets(t, v6, mmdbwriter.Options{DatabaseType: "asn ipv6", IPVersion: 6, RecordSize: 24, IncludeReservedNetworks: true,
		DisableIPv4Aliasing: true}, asnNets[4:], testNet.asnRecord)
	r, err := NewResolver(Config{Path: newCityPath(t), ASNPath: v4 + "," + v6, PollInterval: -1, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	for a, want := range map[string]uint32{"1.2.3.4": 64501, "10.9.9.9": 64510, "2001:db8:1::5": 64520, "2001:db8:2::5": 0} {
		if got := r.ResolveAddr(addr(a), nil).ASN; got != want {
			t.Errorf("%s: AS %d, want %d", a, got, want)
		}
	}
	if n := len(r.Databases()); n != 3 {
		t.Errorf("%d databases, want the City one and two ASN ones", n)
	}
}

func newCityPath(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "city.mmdb")
	writeDB(t, path, "GeoIP2-City", cityNets)
	return path
}

// TestASNDatabaseRefusesOthers: a City database given as the ASN
// database, or an ASN one as the City database, is refused with a message
// naming what is missing, and the database in use stays.
func TestASNDatabaseRefusesOthers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	city := newCityPath(t)
	ipl4, _ := writeIPLocationDBs(t, dir, cityNets)
	for name, path := range map[string]string{"MaxMind City": city, "ip-location-db city": ipl4} {
		_, err := NewResolver(Config{ASNPath: path, PollInterval: -1, Logger: discardLogger()})
		if err == nil || !strings.Contains(err.Error(), "autonomous_system_number") || !strings.Contains(err.Error(), path) {
			t.Errorf("%s as the ASN database: %v, want a refusal naming the file and autonomous_system_number", name, err)
		}
	}
	asn := filepath.Join(dir, "asn.mmdb")
	writeASNDB(t, asn, asnNets)
	if _, err := NewResolver(Config{Path: asn, PollInterval: -1, Logger: discardLogger()}); err == nil ||
		!strings.Contains(err.Error(), "does not support the GeoLite2-ASN database") {
		t.Errorf("an ASN database as the City database: %v", err)
	}

	// A reload that finds a City database in the ASN file's place keeps
	// the ASN database in use.
	r, path := asnResolver(t, asnNets)
	writeDB(t, path, "GeoLite2-City", cityNets)
	if err := r.Reload(); err == nil || !strings.Contains(err.Error(), "autonomous_system_number") {
		t.Errorf("reload with a City database as ASN database: %v", err)
	}
	if got := r.ResolveAddr(addr("1.2.3.4"), nil); got.ASN != 64501 || got.Country != "US" {
		t.Errorf("after the refused reload: %+v", got)
	}
	// A good new file replaces it.
	writeASNDB(t, path, []testNet{{cidr: "1.2.3.0/24", lat: 65000}})
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := r.ResolveAddr(addr("1.2.3.4"), nil); got.ASN != 65000 {
		t.Errorf("after the reload: AS %d, want 65000", got.ASN)
	}
}

// TestASNPolled: the ASN file is watched as the City file is.
func TestASNPolled(t *testing.T) {
	t.Parallel()
	r, path := asnResolver(t, asnNets)
	writeASNDB(t, path, []testNet{{cidr: "1.2.3.0/24", lat: 65001}})
	for i := range r.paths {
		r.poll(i)
	}
	if got := r.ResolveAddr(addr("1.2.3.4"), nil); got.ASN != 65001 || got.Country != "US" {
		t.Errorf("after polling: %+v, want AS 65001 in US", got)
	}
}

func TestResolveASNAllocatesNothing(t *testing.T) {
	r, _ := asnResolver(t, asnNets)
	client := netip.MustParsePrefix("1.2.3.0/24")
	allocs := testing.AllocsPerRun(1000, func() {
		if r.Resolve(client, nil).ASN != 64501 {
			t.Fatal("wrong AS")
		}
	})
	if allocs != 0 {
		t.Errorf("Resolve with an ASN database allocates %.1f times", allocs)
	}
}

// BenchmarkResolveTestDBASN is BenchmarkResolveTestDB with an ASN
// database beside the City one.
func BenchmarkResolveTestDBASN(b *testing.B) {
	r, _ := asnResolver(b, asnNets)
	nets, err := NewNetworks([]pools.Network{{CIDR: "10.0.0.0/8", Zone: "corp"}, {CIDR: "1.2.3.0/24", Zone: "lab"}})
	if err != nil {
		b.Fatal(err)
	}
	benchResolve(b, r, nets)
}
