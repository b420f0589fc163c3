package geodata

import (
	"log/slog"
	"net/netip"
	"testing"

	"github.com/oschwald/geoip2-golang/v2"

	"github.com/glb-dns/glb/pools"
)

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func addr(s string) netip.Addr     { return netip.MustParseAddr(s) }
func prefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }
func ptr(f float64) *float64       { return &f }

func TestResolveGeoIP(t *testing.T) {
	t.Parallel()
	r, _ := newTestResolver(t)
	cases := []struct {
		addr string
		want Location
	}{
		{"1.2.3.4", Location{Zone: "WNAM", Region: "WNAM", Country: "US", Subdivision: "CA", Continent: "NA",
			Latitude: 37.77, Longitude: -122.42, HasCoordinates: true, Prefix: 16}},
		{"1.3.0.1", Location{Zone: "ENAM", Region: "ENAM", Country: "US", Subdivision: "NY", Continent: "NA",
			Latitude: 40.71, Longitude: -74.01, HasCoordinates: true, Prefix: 16}},
		// 2.0.0.0/8 is split around 2.16.0.0/16 in the database tree: the
		// prefix is that of the tree's network, 2.0.0.0/12.
		{"2.1.2.3", Location{Zone: "WEU", Region: "WEU", Country: "DE", Continent: "EU",
			Latitude: 51.3, Longitude: 9.5, HasCoordinates: true, Prefix: 12}},
		// The more specific database network wins; it has no coordinates.
		{"2.16.0.9", Location{Zone: "WEU", Region: "WEU", Country: "FR", Continent: "EU", Prefix: 16}},
		{"3.0.0.200", Location{Zone: "NEAS", Region: "NEAS", Country: "JP", Subdivision: "13", Continent: "AS",
			Latitude: 35.69, Longitude: 139.69, HasCoordinates: true, Prefix: 24}},
		// Only the registered country is known: it stands in, and the
		// continent comes from the region table.
		{"4.0.0.1", Location{Zone: "SSAM", Region: "SSAM", Country: "BR", Continent: "SA", Prefix: 24}},
		{"5.0.0.1", Location{Zone: "WNAM", Region: "WNAM", Country: "CA", Subdivision: "BC", Continent: "NA",
			Latitude: 49.28, Longitude: -123.12, HasCoordinates: true, Prefix: 24}},
		{"5.0.1.1", Location{Zone: "ENAM", Region: "ENAM", Country: "CA", Subdivision: "ON", Continent: "NA",
			Latitude: 43.65, Longitude: -79.38, HasCoordinates: true, Prefix: 24}},
		{"2001:db8:1:ff::1", Location{Zone: "OC", Region: "OC", Country: "AU", Subdivision: "NSW", Continent: "OC",
			Latitude: -33.87, Longitude: 151.21, HasCoordinates: true, Prefix: 48}},
		{"2001:db8:2::1", Location{Zone: "SAF", Region: "SAF", Country: "ZA", Continent: "AF", Prefix: 48}},
		{"2001:db8:3::1", Location{Zone: "WEU", Region: "WEU", Country: "GB", Subdivision: "ENG", Continent: "EU",
			Latitude: 51.5, Longitude: -0.13, HasCoordinates: true, Prefix: 64}},
		// IPv4-mapped IPv6 is IPv4.
		{"::ffff:1.2.3.4", Location{Zone: "WNAM", Region: "WNAM", Country: "US", Subdivision: "CA", Continent: "NA",
			Latitude: 37.77, Longitude: -122.42, HasCoordinates: true, Prefix: 16}},
		// In no database network.
		{"9.9.9.9", Location{Prefix: -1}},
		{"2001:db8:ffff::1", Location{Prefix: -1}},
	}
	for _, c := range cases {
		got := r.ResolveAddr(addr(c.addr), nil)
		if got != c.want {
			t.Errorf("ResolveAddr(%s) =\n  %+v\nwant\n  %+v", c.addr, got, c.want)
		}
		if got.Known() != (c.want.Prefix >= 0) {
			t.Errorf("ResolveAddr(%s).Known() = %v", c.addr, got.Known())
		}
	}
	if got := r.ResolveAddr(addr("2.200.0.1"), nil).Prefix; got != 9 {
		t.Errorf("2.200.0.1 prefix = %d, want 9 (2.128.0.0/9)", got)
	}
}

// TestResolveMatchesGeoIP2 checks the hand-written decoder against the
// geoip2 library's full decode of the same database.
func TestResolveMatchesGeoIP2(t *testing.T) {
	t.Parallel()
	r, path := newTestResolver(t)
	g, err := geoip2.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for _, n := range cityNets {
		a := prefix(n.cidr).Addr().Next()
		city, err := g.City(a)
		if err != nil {
			t.Fatal(err)
		}
		loc := r.ResolveAddr(a, nil)
		wantCountry := city.Country.ISOCode
		if wantCountry == "" {
			wantCountry = city.RegisteredCountry.ISOCode
		}
		wantSub := ""
		if len(city.Subdivisions) > 0 {
			wantSub = city.Subdivisions[0].ISOCode
		}
		if loc.Country != wantCountry || loc.Subdivision != wantSub {
			t.Errorf("%s: country/sub %s/%s, geoip2 says %s/%s", a, loc.Country, loc.Subdivision, wantCountry, wantSub)
		}
		if city.Continent.Code != "" && loc.Continent != city.Continent.Code {
			t.Errorf("%s: continent %s, geoip2 says %s", a, loc.Continent, city.Continent.Code)
		}
		if city.Location.HasCoordinates() != loc.HasCoordinates ||
			loc.HasCoordinates && (*city.Location.Latitude != loc.Latitude || *city.Location.Longitude != loc.Longitude) {
			t.Errorf("%s: coordinates %v %v,%v; geoip2 says %+v", a, loc.HasCoordinates, loc.Latitude, loc.Longitude, city.Location)
		}
		if loc.Prefix != city.Traits.Network.Bits() {
			t.Errorf("%s: prefix %d, geoip2 network %s", a, loc.Prefix, city.Traits.Network)
		}
	}
}

func TestResolveECS(t *testing.T) {
	t.Parallel()
	r, _ := newTestResolver(t)
	cases := []struct {
		ecs, inside string
		prefix      int
	}{
		// Database network shorter than the source: its length.
		{"1.2.3.0/24", "1.2.3.77", 16},
		// Database network as long as the source.
		{"3.0.0.0/24", "3.0.0.1", 24},
		// Database network longer than the source: the source's length.
		{"3.0.0.0/16", "3.0.0.1", 16},
		{"2001:db8:1:ff00::/56", "2001:db8:1:ff00::1", 48},
		{"2001:db8:3::/56", "2001:db8:3::1", 56},
		// An ECS option may carry an IPv4-mapped subnet.
		{"::ffff:1.2.3.0/120", "1.2.3.1", 16},
		// Host bits in the option are ignored.
		{"1.2.3.99/24", "1.2.3.1", 16},
	}
	for _, c := range cases {
		got := r.Resolve(prefix(c.ecs), nil)
		want := r.ResolveAddr(addr(c.inside), nil)
		want.Prefix = c.prefix
		if got != want {
			t.Errorf("Resolve(%s) = %+v, want %+v", c.ecs, got, want)
		}
	}
	if got := r.Resolve(netip.Prefix{}, nil); got != (Location{Prefix: -1}) {
		t.Errorf("invalid prefix: %+v", got)
	}
}

func TestNetworkOverridesGeoIP(t *testing.T) {
	t.Parallel()
	r, _ := newTestResolver(t)
	nets, err := NewNetworks([]pools.Network{
		// Sets only the zone: everything else comes from GeoIP.
		{CIDR: "1.2.3.0/24", Zone: "zone-a"},
		// Sets the region (and coordinates) of US clients in 1.3/16.
		{CIDR: "1.3.0.0/16", Region: "WNAM", Latitude: ptr(1), Longitude: ptr(2)},
		// Moves clients to another country: below-country GeoIP data goes.
		{CIDR: "10.1.0.0/16", Country: "JP"},
		// Says everything: GeoIP is not consulted.
		{CIDR: "10.2.0.0/16", Zone: "dc-1", Region: "WEU", Country: "FR", Latitude: ptr(48.8), Longitude: ptr(2.3)},
		// Same country as GeoIP: the subdivision stays.
		{CIDR: "10.3.0.0/16", Country: "US"},
		// An address GeoIP does not know.
		{CIDR: "192.0.2.0/24", Zone: "lab", Country: "NL"},
	})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		addr string
		want Location
	}{
		{"1.2.3.4", Location{Zone: "zone-a", Region: "WNAM", Country: "US", Subdivision: "CA", Continent: "NA",
			Latitude: 37.77, Longitude: -122.42, HasCoordinates: true, Prefix: 24}},
		// Outside the operator's /24 but inside the database /16: the
		// piece of the address space without networks is the scope.
		{"1.2.4.4", Location{Zone: "WNAM", Region: "WNAM", Country: "US", Subdivision: "CA", Continent: "NA",
			Latitude: 37.77, Longitude: -122.42, HasCoordinates: true, Prefix: 22}},
		{"1.3.9.9", Location{Zone: "WNAM", Region: "WNAM", Country: "US", Subdivision: "NY", Continent: "NA",
			Latitude: 1, Longitude: 2, HasCoordinates: true, Prefix: 16}},
		{"10.1.0.1", Location{Zone: "NEAS", Region: "NEAS", Country: "JP", Continent: "AS", Prefix: 16}},
		{"10.2.0.1", Location{Zone: "dc-1", Region: "WEU", Country: "FR", Continent: "EU",
			Latitude: 48.8, Longitude: 2.3, HasCoordinates: true, Prefix: 16}},
		{"10.3.0.1", Location{Zone: "WNAM", Region: "WNAM", Country: "US", Subdivision: "WA", Continent: "NA",
			Latitude: 47.6, Longitude: -122.3, HasCoordinates: true, Prefix: 16}},
		{"192.0.2.7", Location{Zone: "lab", Region: "WEU", Country: "NL", Continent: "EU", Prefix: 24}},
		{"::ffff:192.0.2.7", Location{Zone: "lab", Region: "WEU", Country: "NL", Continent: "EU", Prefix: 24}},
	}
	for _, c := range cases {
		if got := r.ResolveAddr(addr(c.addr), nets); got != c.want {
			t.Errorf("ResolveAddr(%s) =\n  %+v\nwant\n  %+v", c.addr, got, c.want)
		}
	}
	// ECS inside an operator network: capped at the source prefix.
	if got := r.Resolve(prefix("10.2.3.0/24"), nets).Prefix; got != 16 {
		t.Errorf("ECS /24 in a /16 network: prefix %d, want 16", got)
	}
	if got := r.Resolve(prefix("10.2.0.0/12"), nets).Prefix; got != 12 {
		t.Errorf("ECS /12 over a /16 network: prefix %d, want 12", got)
	}
}

func TestResolveWithoutDatabase(t *testing.T) {
	t.Parallel()
	nets, err := NewNetworks([]pools.Network{{CIDR: "192.0.2.0/24", Zone: "lab", Region: "ENAM"}})
	if err != nil {
		t.Fatal(err)
	}
	var none *Resolver
	if got, want := none.ResolveAddr(addr("192.0.2.1"), nets), (Location{Zone: "lab", Region: "ENAM", Prefix: 24}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := none.ResolveAddr(addr("198.51.100.1"), nets); got != (Location{Prefix: -1}) {
		t.Errorf("outside every network: %+v", got)
	}
	r, err := NewResolver(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.ResolveAddr(addr("1.2.3.4"), nil); got.Known() {
		t.Errorf("no database, no networks: %+v", got)
	}
	if _, ok := r.Info(); ok {
		t.Error("Info reports a database where none is configured")
	}
}

func TestResolveDoesNotAllocate(t *testing.T) {
	r, _ := newTestResolver(t)
	nets, err := NewNetworks([]pools.Network{{CIDR: "1.2.3.0/24", Zone: "zone-a"}, {CIDR: "10.0.0.0/8", Country: "JP"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"1.2.3.4", "1.3.0.1", "3.0.0.200", "5.0.0.1", "10.1.1.1", "2001:db8:1::1", "2001:db8:3::1", "9.9.9.9", "::ffff:1.2.3.4"} {
		ip := addr(a)
		r.ResolveAddr(ip, nets) // first sight of a subdivision code interns it
		if n := testing.AllocsPerRun(200, func() { r.ResolveAddr(ip, nets) }); n != 0 {
			t.Errorf("ResolveAddr(%s): %v allocations per call, want 0", a, n)
		}
	}
	ecs := prefix("2001:db8:1:ff00::/56")
	if n := testing.AllocsPerRun(200, func() { r.Resolve(ecs, nets) }); n != 0 {
		t.Errorf("Resolve(%s): %v allocations per call, want 0", ecs, n)
	}
}
