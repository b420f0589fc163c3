package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

func monitorConfig(g *glb, interval int, path string) string {
	return g.provider() + fmt.Sprintf(`
resource "glb_monitor" "m" {
  id             = "tf-http"
  description    = "tf http"
  path           = %q
  expected_codes = "2xx"
  interval       = %d
  header         = { Host = ["www.example.com"] }
}
`, path, interval)
}

// TestAccMonitor: create with Cloudflare's defaults computed, import by
// id and by description, update in place, drift, a concurrent write
// refused, destroy.
func TestAccMonitor(t *testing.T) {
	g := startGLB(t)
	const p = "/monitors/tf-http"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		CheckDestroy:             g.gone(p),
		Steps: []resource.TestStep{
			{
				Config: monitorConfig(g, 30, "/healthz"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("glb_monitor.m", "type", "http"),
					resource.TestCheckResourceAttr("glb_monitor.m", "method", "GET"),
					resource.TestCheckResourceAttr("glb_monitor.m", "timeout", "5"),
					resource.TestCheckResourceAttr("glb_monitor.m", "retries", "2"),
					func(*terraform.State) error {
						return g.apiIs(p, map[string]any{"interval": 30, "path": "/healthz", "header": map[string]any{"Host": []string{"www.example.com"}}})
					},
				),
			},
			{ResourceName: "glb_monitor.m", ImportState: true, ImportStateVerify: true},
			{ResourceName: "glb_monitor.m", ImportState: true, ImportStateVerify: true, ImportStateId: "tf http"},
			{
				Config: monitorConfig(g, 45, "/healthz"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("glb_monitor.m", plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error { return g.apiIs(p, map[string]any{"interval": 45, "timeout": 5}) },
			},
			{
				PreConfig: func() { g.patch(p, map[string]any{"path": "/elsewhere"}) },
				Config:    monitorConfig(g, 45, "/healthz"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("glb_monitor.m", plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error { return g.apiIs(p, map[string]any{"path": "/healthz"}) },
			},
			{
				Config: monitorConfig(g, 20, "/healthz"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					concurrentWrite{g, func() string { return p }, map[string]any{"interval": 90}},
				}},
				ExpectError: staleWrite,
			},
			{
				// Refreshed, the apply goes through over the other write.
				Config: monitorConfig(g, 20, "/healthz"),
				Check:  func(*terraform.State) error { return g.apiIs(p, map[string]any{"interval": 20}) },
			},
		},
	})
}
