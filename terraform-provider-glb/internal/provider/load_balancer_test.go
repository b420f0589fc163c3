package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// lbConfig is a zone, two pools and a load balancer answering from the
// first of pools that serves; extra goes into the load balancer.
func lbConfig(g *glb, pools string, ttl int, extra string) string {
	return g.provider() + fmt.Sprintf(`
resource "glb_zone" "z" {
  name        = "lb.example.com"
  nameservers = ["ns1.lb.example.com"]
  records     = [{ name = "ns1.lb.example.com", type = "A", content = "127.0.0.53" }]
}

resource "glb_pool" "primary" {
  name = "primary"
  origins = [
    { name = "a", address = "127.0.0.31", weight = 0.7 },
    { name = "b", address = "127.0.0.32", weight = 0.3 },
  ]
}

resource "glb_pool" "secondary" {
  name    = "secondary"
  origins = [{ name = "c", address = "127.0.0.33" }]
}

resource "glb_load_balancer" "www" {
  zone          = glb_zone.z.id
  name          = "www.lb.example.com"
  default_pools = [%s]
  fallback_pool = glb_pool.secondary.id
  answers       = 0
  ttl           = %d
%s}
`, pools, ttl, extra)
}

const (
	primaryFirst   = "glb_pool.primary.id, glb_pool.secondary.id"
	secondaryFirst = "glb_pool.secondary.id, glb_pool.primary.id"
)

// TestAccLoadBalancer: a load balancer with its defaults computed, import
// by id and by name, an update in place that dig sees, a geo map that
// makes the server choose geo steering (computed, no diff after), drift,
// a concurrent write refused, destroy.
func TestAccLoadBalancer(t *testing.T) {
	g := startGLB(t)
	var id string
	lb := func() string { return "/load_balancers/" + id }
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		CheckDestroy:             func(s *terraform.State) error { return g.gone(lb())(s) },
		Steps: []resource.TestStep{
			{
				Config: lbConfig(g, primaryFirst, 30, ""),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("glb_load_balancer.www", "enabled", "true"),
					resource.TestCheckResourceAttr("glb_load_balancer.www", "steering_policy", "off"),
					resource.TestCheckResourceAttr("glb_load_balancer.www", "location_strategy.prefer_ecs", "auto"),
					resource.TestCheckResourceAttr("glb_load_balancer.www", "zonal_affinity.spillover", "ZONAL_AFFINITY_DISABLED"),
					resource.TestCheckResourceAttr("glb_load_balancer.www", "all_down.action", "fallback"),
					resource.TestCheckResourceAttr("glb_load_balancer.www", "safety.min_serving_pools", "1"),
					resource.TestCheckResourceAttr("glb_load_balancer.www", "random_steering.default_weight", "1"),
					resource.TestCheckResourceAttrWith("glb_load_balancer.www", "id", func(v string) error {
						id = v
						return g.answers("www.lb.example.com", "A", "127.0.0.31 127.0.0.32")
					}),
				),
			},
			{ResourceName: "glb_load_balancer.www", ImportState: true, ImportStateVerify: true},
			{ResourceName: "glb_load_balancer.www", ImportState: true, ImportStateVerify: true, ImportStateId: "www.lb.example.com"},
			{ResourceName: "glb_pool.secondary", ImportState: true, ImportStateVerify: true, ImportStateId: "secondary"},
			{
				// Failover order swapped: dig sees the secondary first.
				Config: lbConfig(g, secondaryFirst, 60, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("glb_load_balancer.www", plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					if err := g.apiIs(lb(), map[string]any{"ttl": 60}); err != nil {
						return err
					}
					return g.answers("www.lb.example.com", "A", "127.0.0.33")
				},
			},
			{
				// A geo map without a steering policy: the server steers
				// by geo and says so; the next plan is empty.
				Config: lbConfig(g, secondaryFirst, 60, `  region_pools = { WEU = [glb_pool.primary.id] }
`),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("glb_load_balancer.www", "steering_policy", "geo"),
					func(*terraform.State) error { return g.apiIs(lb(), map[string]any{"steering_policy": "geo"}) },
				),
			},
			{
				PreConfig: func() { g.patch(lb(), map[string]any{"ttl": 300}) },
				Config: lbConfig(g, secondaryFirst, 60, `  region_pools = { WEU = [glb_pool.primary.id] }
`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("glb_load_balancer.www", plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error { return g.apiIs(lb(), map[string]any{"ttl": 60}) },
			},
			{
				Config: lbConfig(g, primaryFirst, 60, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					concurrentWrite{g, lb, map[string]any{"description": "edited elsewhere"}},
				}},
				ExpectError: staleWrite,
			},
			{
				Config: lbConfig(g, primaryFirst, 60, ""),
				Check: func(*terraform.State) error {
					if err := g.apiIs(lb(), map[string]any{"description": "edited elsewhere", "region_pools": nil}); err != nil {
						return err
					}
					return g.answers("www.lb.example.com", "A", "127.0.0.31 127.0.0.32")
				},
			},
		},
	})
}

// rumConfig is a load balancer steered by measured latency over two pools
// the RUM beacon times; rum is the HCL of its rum attribute.
func rumConfig(g *glb, rum string) string {
	return g.provider() + fmt.Sprintf(`
resource "glb_zone" "z" {
  name        = "rum.example.com"
  nameservers = ["ns1.rum.example.com"]
}

resource "glb_pool" "eu" {
  name    = "rum-eu"
  rum     = { probe_url = "https://eu.rum.example.com/probe.gif" }
  origins = [{ name = "a", address = "127.0.0.61" }]
}

resource "glb_pool" "us" {
  name    = "rum-us"
  rum     = { probe_url = "https://us.rum.example.com/probe.gif" }
  origins = [{ name = "b", address = "127.0.0.62" }]
}

resource "glb_load_balancer" "www" {
  id              = "rum-www"
  zone            = glb_zone.z.id
  name            = "www.rum.example.com"
  steering_policy = "measured_latency"
  default_pools   = [glb_pool.eu.id, glb_pool.us.id]
  fallback_pool   = glb_pool.us.id
  # Zeros the API leaves out of its answers, written: an import reads
  # them back as written.
  owner = ""
  https = { alpn = ["h2"], port = 0 }
%s
}
`, rum)
}

// TestAccLoadBalancerRUM: measured_latency steering and the rum settings
// made, imported and planned empty after the apply, min_samples left to
// the server, zeros the API leaves out written (owner, https.port);
// drift of the site keys undone; rum removed.
func TestAccLoadBalancerRUM(t *testing.T) {
	g := startGLB(t)
	const lb = "/load_balancers/rum-www"
	const rum = `  rum = {
    site_keys       = ["shop-www", "shop-app"]
    allowed_origins = ["https://shop.example.com"]
  }`
	empty := []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		CheckDestroy:             g.gone(lb),
		Steps: []resource.TestStep{
			{
				Config:           rumConfig(g, rum),
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: empty},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("glb_load_balancer.www", "steering_policy", "measured_latency"),
					resource.TestCheckResourceAttr("glb_load_balancer.www", "rum.site_keys.1", "shop-app"),
					resource.TestCheckResourceAttr("glb_load_balancer.www", "rum.allowed_origins.0", "https://shop.example.com"),
					resource.TestCheckResourceAttr("glb_load_balancer.www", "rum.min_samples", "0"),
					resource.TestCheckResourceAttr("glb_pool.eu", "rum.probe_url", "https://eu.rum.example.com/probe.gif"),
					func(*terraform.State) error {
						return g.apiIs(lb, map[string]any{"steering_policy": "measured_latency",
							"rum": map[string]any{"site_keys": []string{"shop-www", "shop-app"}, "allowed_origins": []string{"https://shop.example.com"}, "min_samples": 0}})
					},
				),
			},
			{ResourceName: "glb_load_balancer.www", ImportState: true, ImportStateVerify: true},
			{ResourceName: "glb_pool.us", ImportState: true, ImportStateVerify: true, ImportStateId: "rum-us"},
			{
				PreConfig: func() {
					g.patch(lb, map[string]any{"rum": map[string]any{"site_keys": []string{"elsewhere"}, "min_samples": 100}})
				},
				Config: rumConfig(g, rum),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction("glb_load_balancer.www", plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: empty,
				},
				// min_samples is the server's when left out: the apply
				// keeps the 100 written elsewhere, as any computed default.
				Check: func(*terraform.State) error {
					return g.apiIs(lb, map[string]any{"rum.site_keys": []string{"shop-www", "shop-app"}, "rum.min_samples": 100})
				},
			},
			{
				Config: rumConfig(g, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction("glb_load_balancer.www", plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: empty,
				},
				Check: func(*terraform.State) error {
					return g.apiIs(lb, map[string]any{"rum": nil, "steering_policy": "measured_latency"})
				},
			},
		},
	})
}
