package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

func zoneConfig(g *glb, ttl int, records string) string {
	return g.provider() + fmt.Sprintf(`
resource "glb_zone" "z" {
  name        = "tf.example.com"
  nameservers = ["ns1.tf.example.com"]
  soa         = { rname = "hostmaster.example.com" }
  ttl         = %d
  records = [
    { name = "ns1.tf.example.com", type = "A", content = "192.0.2.53" },%s
  ]
}
`, ttl, records)
}

// TestAccZone: create with the server's defaults computed, import by id
// and by name, update in place, drift after an API edit, a concurrent
// write refused by If-Match, destroy.
func TestAccZone(t *testing.T) {
	g := startGLB(t)
	var id string
	txt := `
    { name = "txt.tf.example.com", type = "TXT", content = "\"v=1\"" },`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		CheckDestroy: func(s *terraform.State) error {
			return g.gone("/zones/" + id)(s)
		},
		Steps: []resource.TestStep{
			{
				Config: zoneConfig(g, 300, ""),
				Check: resource.ComposeAggregateTestCheckFunc(
					// Filled by the server, computed, and no diff on the
					// next plan (the framework plans again after apply).
					resource.TestCheckResourceAttr("glb_zone.z", "soa.refresh", "14400"),
					resource.TestCheckResourceAttr("glb_zone.z", "soa.minimum", "300"),
					resource.TestCheckResourceAttr("glb_zone.z", "records.0.ttl", "0"),
					resource.TestCheckResourceAttr("glb_zone.z", "dnssec.enabled", "false"),
					resource.TestCheckResourceAttrSet("glb_zone.z", "serial"),
					resource.TestCheckResourceAttrSet("glb_zone.z", "revision"),
					resource.TestCheckResourceAttrWith("glb_zone.z", "id", func(v string) error {
						id = v
						return g.apiIs("/zones/"+v, map[string]any{"name": "tf.example.com", "soa.rname": "hostmaster.example.com"})
					}),
				),
			},
			{ResourceName: "glb_zone.z", ImportState: true, ImportStateVerify: true},
			{ResourceName: "glb_zone.z", ImportState: true, ImportStateVerify: true, ImportStateId: "tf.example.com"},
			{
				Config: zoneConfig(g, 120, txt),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("glb_zone.z", plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					if err := g.apiIs("/zones/"+id, map[string]any{"ttl": 120, "records.1.content": `"v=1"`}); err != nil {
						return err
					}
					return g.answers("txt.tf.example.com", "TXT", `"v=1"`)
				},
			},
			{
				// Drift: an operator changes the TTL behind Terraform's
				// back; the refresh sees it and the plan puts it back.
				PreConfig: func() { g.patch("/zones/"+id, map[string]any{"ttl": 900}) },
				Config:    zoneConfig(g, 120, txt),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("glb_zone.z", plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error { return g.apiIs("/zones/"+id, map[string]any{"ttl": 120}) },
			},
			{
				// Someone writes between the plan and its apply: the
				// apply's If-Match is stale and it fails, their write kept.
				Config: zoneConfig(g, 180, txt),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					concurrentWrite{g, func() string { return "/zones/" + id }, map[string]any{"ttl": 240}},
				}},
				ExpectError: staleWrite,
			},
			{
				Config: zoneConfig(g, 180, txt),
				Check:  func(*terraform.State) error { return g.apiIs("/zones/"+id, map[string]any{"ttl": 180}) },
			},
		},
	})
}
