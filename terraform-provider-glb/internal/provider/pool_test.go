package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// The origins are loopback addresses: the monitors really probe them.
func poolConfig(g *glb, shed int, origins string) string {
	return g.provider() + fmt.Sprintf(`
resource "glb_monitor" "http" {
  id   = "p-http"
  port = 1
}

resource "glb_monitor" "tcp" {
  id   = "p-tcp"
  type = "tcp"
  port = 1
}

resource "glb_pool" "p" {
  name = "web-eu"
  monitors = [
    { monitor = glb_monitor.http.id },
    { monitor = glb_monitor.tcp.id, must_be_healthy = true },
  ]
  load_shedding = { default_percent = %d }
  origins = [%s
  ]
}
`, shed, origins)
}

const twoOrigins = `
    { name = "a", address = "127.0.0.21", weight = 0.4, zone = "zone-1" },
    { name = "b", address = "127.0.0.22", weight = 0.6, zone = "zone-2" },`

// TestAccPool: origins as nested attributes with their defaults computed,
// a monitor group, load shedding; import by id and by name, update in
// place, drift, a concurrent write refused, destroy.
func TestAccPool(t *testing.T) {
	g := startGLB(t)
	var id string
	pool := func() string { return "/pools/" + id }
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		CheckDestroy:             func(s *terraform.State) error { return g.gone(pool(), "/monitors/p-http", "/monitors/p-tcp")(s) },
		Steps: []resource.TestStep{
			{
				Config: poolConfig(g, 10, twoOrigins),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("glb_pool.p", "enabled", "true"),
					resource.TestCheckResourceAttr("glb_pool.p", "minimum_origins", "1"),
					resource.TestCheckResourceAttr("glb_pool.p", "origin_steering.policy", "random"),
					resource.TestCheckResourceAttr("glb_pool.p", "load_shedding.default_policy", "random"),
					resource.TestCheckResourceAttr("glb_pool.p", "origins.0.enabled", "true"),
					resource.TestCheckResourceAttr("glb_pool.p", "origins.1.weight", "0.6"),
					resource.TestCheckResourceAttr("glb_pool.p", "monitors.0.must_be_healthy", "false"),
					resource.TestCheckResourceAttr("glb_pool.p", "monitors.1.must_be_healthy", "true"),
					resource.TestCheckResourceAttr("glb_pool.p", "monitors.1.monitoring_only", "false"),
					resource.TestCheckResourceAttrWith("glb_pool.p", "id", func(v string) error {
						id = v
						return g.apiIs(pool(), map[string]any{"origins.1.weight": 0.6, "load_shedding.default_percent": 10, "monitor": ""})
					}),
				),
			},
			{ResourceName: "glb_pool.p", ImportState: true, ImportStateVerify: true},
			{ResourceName: "glb_pool.p", ImportState: true, ImportStateVerify: true, ImportStateId: "web-eu"},
			{
				Config: poolConfig(g, 10, twoOrigins+`
    { name = "c", address = "127.0.0.23", weight = 0.3, enabled = false },`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("glb_pool.p", plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					return g.apiIs(pool(), map[string]any{"origins.2.name": "c", "origins.2.weight": 0.3, "origins.2.enabled": false})
				},
			},
			{
				PreConfig: func() { g.patch(pool(), map[string]any{"load_shedding": map[string]any{"default_percent": 50}}) },
				Config:    poolConfig(g, 10, twoOrigins),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("glb_pool.p", plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					return g.apiIs(pool(), map[string]any{"load_shedding.default_percent": 10, "origins.2": nil})
				},
			},
			{
				Config: poolConfig(g, 20, twoOrigins),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					concurrentWrite{g, pool, map[string]any{"description": "edited elsewhere"}},
				}},
				ExpectError: staleWrite,
			},
			{
				Config: poolConfig(g, 20, twoOrigins),
				Check: func(*terraform.State) error {
					return g.apiIs(pool(), map[string]any{"load_shedding.default_percent": 20, "description": "edited elsewhere"})
				},
			},
		},
	})
}

// byLoadConfig is a pool checked by a feed monitor whose load shedding
// follows the loads fed in, timed by the RUM beacon; byLoad and rum are
// the HCL of those attributes, "" for none.
func byLoadConfig(g *glb, byLoad, rum string) string {
	return g.provider() + fmt.Sprintf(`
resource "glb_monitor" "feed" {
  id   = "bl-feed"
  type = "feed"
}

resource "glb_pool" "p" {
  id      = "bl-pool"
  name    = "by-load"
  monitor = glb_monitor.feed.id
  load_shedding = {
    default_percent = 5
%s  }
%s
  origins = [
    { name = "a", address = "127.0.0.24" },
    { name = "b", address = "127.0.0.25" },
  ]
}
`, byLoad, rum)
}

const (
	byLoadSet = "    by_load = { low = 0.7, high = 0.95 }\n"
	poolRUM   = `  rum = { probe_url = "https://by-load.example.com/rum.gif" }`
)

// TestAccPoolByLoad: load_shedding.by_load and rum.probe_url made,
// imported and planned empty after the apply; by_load edited behind
// Terraform's back is drift the next apply undoes; both removed from the
// configuration are removed from the pool.
func TestAccPoolByLoad(t *testing.T) {
	g := startGLB(t)
	const pool = "/pools/bl-pool"
	empty := []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		CheckDestroy:             g.gone(pool, "/monitors/bl-feed"),
		Steps: []resource.TestStep{
			{
				Config:           byLoadConfig(g, byLoadSet, poolRUM),
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: empty},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("glb_pool.p", "load_shedding.by_load.low", "0.7"),
					resource.TestCheckResourceAttr("glb_pool.p", "load_shedding.by_load.high", "0.95"),
					resource.TestCheckResourceAttr("glb_pool.p", "load_shedding.default_policy", "random"),
					resource.TestCheckResourceAttr("glb_pool.p", "rum.probe_url", "https://by-load.example.com/rum.gif"),
					func(*terraform.State) error {
						return g.apiIs(pool, map[string]any{"load_shedding.by_load": map[string]any{"low": 0.7, "high": 0.95},
							"load_shedding.default_percent": 5, "rum.probe_url": "https://by-load.example.com/rum.gif"})
					},
				),
			},
			{ResourceName: "glb_pool.p", ImportState: true, ImportStateVerify: true},
			{ResourceName: "glb_pool.p", ImportState: true, ImportStateVerify: true, ImportStateId: "by-load"},
			{
				PreConfig: func() {
					g.patch(pool, map[string]any{"load_shedding": map[string]any{"by_load": map[string]any{"low": 0.5, "high": 0.6}}})
				},
				Config: byLoadConfig(g, byLoadSet, poolRUM),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction("glb_pool.p", plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: empty,
				},
				Check: func(*terraform.State) error {
					return g.apiIs(pool, map[string]any{"load_shedding.by_load": map[string]any{"low": 0.7, "high": 0.95}})
				},
			},
			{
				Config: byLoadConfig(g, "", ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction("glb_pool.p", plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: empty,
				},
				Check: func(*terraform.State) error {
					return g.apiIs(pool, map[string]any{"load_shedding.by_load": nil, "rum": nil, "load_shedding.default_percent": 5})
				},
			},
		},
	})
}
