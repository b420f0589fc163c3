package provider

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/glb-dns/glb/internal/testnode"
)

// The examples' scenarios are applied as written, but for their
// documentation addresses (192.0.2.0/24), which become loopback ones
// (127.0.2.0/24) so that the monitors probe nothing beyond this machine,
// and dig, sending from an address of the scenario's networks, sees each
// load balancer answer as the scenario says.

func scenario(t *testing.T, g *glb, name string, edits ...string) string {
	b, err := os.ReadFile("../../examples/scenarios/" + name + "/main.tf")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(b), "192.0.2.", "127.0.2.")
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(s, edits[i]) {
			t.Fatalf("scenario %s has no %q", name, edits[i])
		}
		s = strings.ReplaceAll(s, edits[i], edits[i+1])
	}
	return g.provider() + s
}

// digFrom polls dig, sent from src, until the answers' data satisfy ok.
func (g *glb) digFrom(src, name string, ok func([]string) bool, want string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := testnode.Dig(g.dns, "-b", src, "+short", name, "A")
		got := strings.Fields(string(out))
		if err == nil && ok(got) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("dig -b %s %s: %q (%v), want %s", src, name, got, err, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// exactly says the answers are want, in any order.
func exactly(want ...string) func([]string) bool {
	return func(got []string) bool {
		if len(got) != len(want) {
			return false
		}
		seen := map[string]bool{}
		for _, w := range want {
			seen[w] = true
		}
		for _, a := range got {
			if !seen[a] {
				return false
			}
		}
		return true
	}
}

// listen accepts TCP connections on addr (the monitors' checks) until the
// test ends.
func listen(t *testing.T, addr string) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
}

// TestAccScenarioWeightedFailover: with no origin answering the monitor,
// the fallback pool; with the secondary's first origin answering, the
// secondary pool, that origin alone; with two of the primary's three, the
// primary pool, its healthy origins.
func TestAccScenarioWeightedFailover(t *testing.T) {
	g := startGLB(t)
	// The monitor's port: one a listener of this test holds on another
	// loopback address, so that nothing else answers there.
	l, err := net.Listen("tcp", "127.0.2.99:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	config := scenario(t, g, "weighted-failover", "port        = 443", "port        = "+port, "interval    = 10", "interval    = 1")
	const www = "www.glb.example.com"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		Steps: []resource.TestStep{
			{Config: config, Check: func(*terraform.State) error {
				return g.digFrom("127.0.0.1", www, exactly("127.0.2.30"), "the fallback pool")
			}},
			{
				PreConfig: func() { listen(t, "127.0.2.20:"+port) },
				Config:    config,
				Check: func(*terraform.State) error {
					return g.digFrom("127.0.0.1", www, exactly("127.0.2.20"), "the secondary's healthy origin")
				},
			},
			{
				PreConfig: func() { listen(t, "127.0.2.10:"+port); listen(t, "127.0.2.11:"+port) },
				Config:    config,
				Check: func(*terraform.State) error {
					return g.digFrom("127.0.0.1", www, func(a []string) bool {
						return len(a) == 1 && (a[0] == "127.0.2.10" || a[0] == "127.0.2.11")
					}, "one of the primary's healthy origins")
				},
			},
		},
	})
}

// TestAccScenarioGeoFallback: the office network's resolvers are in
// Western Europe; no origin passes the https check, so the EU pool, the
// fallback, answers them whatever its health; everyone else gets the
// default pools, also down, so the fallback too.
func TestAccScenarioGeoFallback(t *testing.T) {
	g := startGLB(t)
	const www = "www.geo.example.com"
	eu := func(a []string) bool { return len(a) == 1 && (a[0] == "127.0.2.40" || a[0] == "127.0.2.41") }
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		Steps: []resource.TestStep{{
			Config: scenario(t, g, "geo-fallback", "interval       = 30", "interval       = 1\n  timeout        = 1"),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("glb_load_balancer.www", "steering_policy", "geo"),
				resource.TestCheckResourceAttr("data.glb_regions.all", "regions.#", "13"),
				func(*terraform.State) error { return g.digFrom("127.0.2.1", www, eu, "an EU origin") },
			),
		}},
	})
}

// TestAccScenarioZonalAffinity: the seed's worked example, all origins
// healthy (no monitor): a client of zone-1 gets the five zone-1 origins,
// one of zone-2 the five zone-2 ones.
func TestAccScenarioZonalAffinity(t *testing.T) {
	g := startGLB(t)
	const app = "app.za.example.com"
	var z1, z2 []string
	for i := 0; i < 5; i++ {
		z1 = append(z1, fmt.Sprintf("127.0.2.%d", 60+i))
		z2 = append(z2, fmt.Sprintf("127.0.2.%d", 70+i))
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		Steps: []resource.TestStep{{
			Config: scenario(t, g, "zonal-affinity"),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("glb_pool.app", "origins.9.zone", "zone-2"),
				resource.TestCheckResourceAttr("glb_pool.app", "origins.9.weight", "1"),
				func(*terraform.State) error { return g.digFrom("127.0.2.5", app, exactly(z1...), "the zone-1 origins") },
				func(*terraform.State) error {
					return g.digFrom("127.0.2.200", app, exactly(z2...), "the zone-2 origins")
				},
			),
		}},
	})
}
