package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// geoConfig places the test's own resolver address (127.0.0.1, dig's) by
// an operator network, and steers by geo: a region's pools first, the
// default pools for everyone else, the fallback when all are down.
func geoConfig(g *glb, region string) string {
	return g.provider() + fmt.Sprintf(`
resource "glb_network" "lab" {
  cidr        = "127.0.0.0/8"
  description = "the lab's resolvers"
  region      = %q
}

resource "glb_zone" "z" {
  name        = "geo.example.com"
  nameservers = ["ns1.geo.example.com"]
  dnssec      = { enabled = true }
}

resource "glb_pool" "eu" {
  name    = "eu"
  origins = [{ name = "fra", address = "127.0.0.41" }]
}

resource "glb_pool" "us" {
  name    = "us"
  origins = [{ name = "iad", address = "127.0.0.42" }]
}

resource "glb_load_balancer" "www" {
  zone          = glb_zone.z.id
  name          = "www.geo.example.com"
  region_pools  = { WEU = [glb_pool.eu.id], ENAM = [glb_pool.us.id] }
  default_pools = [glb_pool.us.id]
  fallback_pool = glb_pool.eu.id
}

data "glb_zone" "by_name" {
  name       = "geo.example.com"
  depends_on = [glb_zone.z]
}

data "glb_pool" "eu" {
  name       = "eu"
  depends_on = [glb_pool.eu]
}

data "glb_load_balancer" "www" {
  id = glb_load_balancer.www.id
}

data "glb_regions" "all" {}

data "glb_dnssec_ds" "z" {
  zone       = glb_zone.z.id
  depends_on = [glb_zone.z]
}
`, region)
}

// TestAccNetworkGeo: an operator network placing dig's address in a
// region, which dig sees steer the geo load balancer; import by id and by
// CIDR, update, drift, destroy; and the data sources read what was made.
func TestAccNetworkGeo(t *testing.T) {
	g := startGLB(t)
	var id string
	network := func() string { return "/networks/" + id }
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		CheckDestroy:             func(s *terraform.State) error { return g.gone(network())(s) },
		Steps: []resource.TestStep{
			{
				Config: geoConfig(g, "WEU"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("glb_network.lab", "country", ""),
					resource.TestCheckResourceAttr("glb_load_balancer.www", "steering_policy", "geo"),
					resource.TestCheckResourceAttrPair("data.glb_zone.by_name", "id", "glb_zone.z", "id"),
					resource.TestCheckResourceAttr("data.glb_zone.by_name", "dnssec.enabled", "true"),
					resource.TestCheckResourceAttrPair("data.glb_pool.eu", "id", "glb_pool.eu", "id"),
					resource.TestCheckResourceAttr("data.glb_pool.eu", "origins.0.address", "127.0.0.41"),
					resource.TestCheckResourceAttr("data.glb_load_balancer.www", "name", "www.geo.example.com"),
					resource.TestCheckResourceAttr("data.glb_regions.all", "regions.#", "13"),
					resource.TestCheckResourceAttr("data.glb_dnssec_ds.z", "signing", "true"),
					resource.TestCheckResourceAttrWith("data.glb_dnssec_ds.z", "ds.0", func(v string) error {
						if len(v) < 70 {
							return fmt.Errorf("ds.0 %q is not a DS record", v)
						}
						return nil
					}),
					resource.TestCheckResourceAttrWith("glb_network.lab", "id", func(v string) error {
						id = v
						return g.answers("www.geo.example.com", "A", "127.0.0.41")
					}),
				),
			},
			{ResourceName: "glb_network.lab", ImportState: true, ImportStateVerify: true},
			{ResourceName: "glb_network.lab", ImportState: true, ImportStateVerify: true, ImportStateId: "127.0.0.0/8"},
			{
				// The lab moves to North America: dig follows.
				Config: geoConfig(g, "ENAM"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("glb_network.lab", plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error { return g.answers("www.geo.example.com", "A", "127.0.0.42") },
			},
			{
				PreConfig: func() { g.patch(network(), map[string]any{"region": "SAS"}) },
				Config:    geoConfig(g, "ENAM"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("glb_network.lab", plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error { return g.apiIs(network(), map[string]any{"region": "ENAM"}) },
			},
		},
	})
}
