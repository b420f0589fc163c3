package dnsserver

import (
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/glb-dns/glb/geodata"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

// asnServer serves testConfig with lb-measured (measured_latency over us
// and eu) and a RUM table in which only AS64500 has figures (eu
// fastest), located by a generated GeoLite2-ASN database placing
// 192.0.2.0/24 in AS64500: a query with that ECS subnet is steered by
// the ASN level, through the GeoIP lookup of the answer path.
func asnServer(t testing.TB) *Server {
	t.Helper()
	tree, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: "GeoLite2-ASN", RecordSize: 24, IncludeReservedNetworks: true})
	if err != nil {
		t.Fatal(err)
	}
	_, n, _ := net.ParseCIDR("192.0.2.0/24")
	if err := tree.Insert(n, mmdbtype.Map{"autonomous_system_number": mmdbtype.Uint32(64500),
		"autonomous_system_organization": mmdbtype.String("Example")}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "asn.mmdb")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tree.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	geo, err := geodata.NewResolver(geodata.Config{ASNPath: path, PollInterval: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}

	cfg := testConfig()
	l := pools.DefaultLoadBalancer()
	l.ID, l.Zone, l.Name, l.DefaultPools, l.FallbackPool = "lb-measured", "z1", "lb-measured.glb.example.com", []string{"us", "eu"}, "us"
	l.SteeringPolicy = pools.SteeringMeasuredLatency
	l.RUM = &pools.LoadBalancerRUM{SiteKeys: []string{"site-key-1"}, MinSamples: 5}
	cfg.LoadBalancers = append(cfg.LoadBalancers, l)
	m := &steering.Measurements{ASNs: []steering.MeasuredGroup{{ASN: 64500,
		Pools: []steering.MeasuredPool{{Pool: "us", MedianMs: 90, P75Ms: 99, Samples: 50}, {Pool: "eu", MedianMs: 20, P75Ms: 25, Samples: 50}}}}}
	st, err := steering.CompileFor(cfg, nil, steering.Options{Measured: m})
	if err != nil {
		t.Fatal(err)
	}
	nets, err := geodata.NewNetworks(cfg.Networks)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := Compile(st, geodata.Locator{Resolver: geo, Networks: nets})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Addr: "127.0.0.1:0", Registerer: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	s.Publish(snap)
	return s
}

// TestHandlerASNLevel: the client's AS, read from the ASN database on
// the answer path, steers measured_latency (eu, AS64500's fastest; us
// elsewhere, the configured order), allocating nothing.
func TestHandlerASNLevel(t *testing.T) {
	s := asnServer(t)
	w := newWorker()
	src := netip.MustParseAddr("127.0.0.1")
	// eu answers with eu1 or eu2 (192.0.2.10, .11), us with us1.
	for ecs, want := range map[string]string{"192.0.2.0/24": "192.0.2.1", "198.18.0.0/24": "192.0.2.20"} {
		q := benchQuery(t, "lb-measured.glb.example.com.", ecs)
		out := w.handle(s, q, src, false)
		var m dns.Msg
		if err := m.Unpack(out); err != nil {
			t.Fatal(err)
		}
		if len(m.Answer) != 1 || !strings.HasPrefix(m.Answer[0].(*dns.A).A.String(), want) {
			t.Errorf("ECS %s: answer %v, want %s*", ecs, m.Answer, want)
		}
		if n := testing.AllocsPerRun(1000, func() { w.handle(s, q, src, false) }); n != 0 {
			t.Errorf("ECS %s: %.1f allocations per query, want 0", ecs, n)
		}
	}
}

// BenchmarkHandlerASN: a measured_latency answer decided by the ASN
// level, the AS looked up in the ASN database per query.
func BenchmarkHandlerASN(b *testing.B) {
	benchHandle(b, asnServer(b), benchQuery(b, "lb-measured.glb.example.com.", "192.0.2.0/24"), netip.MustParseAddr("127.0.0.1"))
}
