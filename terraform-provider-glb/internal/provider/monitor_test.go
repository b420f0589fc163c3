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

// typedMonitorsConfig is a monitor of each type the provider learned
// after the first ones (grpc, icmp, feed) with their own fields, and the
// monitor data source reading the feed monitor by its description.
func typedMonitorsConfig(g *glb, service string, maxLoss, ttl int) string {
	return g.provider() + fmt.Sprintf(`
resource "glb_monitor" "grpc" {
  id          = "tf-grpc"
  type        = "grpc"
  port        = 50051
  service     = %q
  tls         = true
  server_name = "checkout.example.com"
}

resource "glb_monitor" "icmp" {
  id         = "tf-icmp"
  type       = "icmp"
  echo_count = 5
  max_loss   = %d
}

resource "glb_monitor" "feed" {
  id           = "tf-feed"
  description  = "tf alerts"
  type         = "feed"
  ttl          = %d
  pool_label   = "service"
  origin_label = "instance"
}

data "glb_monitor" "feed" {
  description = "tf alerts"
  depends_on  = [glb_monitor.feed]
}

data "glb_monitor" "icmp" {
  id = glb_monitor.icmp.id
}
`, service, maxLoss, ttl)
}

// TestAccMonitorTypes: grpc, icmp and feed monitors with their own
// fields (one written as the zero the API leaves out of its answers), an
// empty plan after the apply, import, an update in place,
// drift of a feed's label, and the data source by description and by id.
func TestAccMonitorTypes(t *testing.T) {
	g := startGLB(t)
	const grpc, icmp, feed = "/monitors/tf-grpc", "/monitors/tf-icmp", "/monitors/tf-feed"
	empty := resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		CheckDestroy:             g.gone(grpc, icmp, feed),
		Steps: []resource.TestStep{
			{
				Config:           typedMonitorsConfig(g, "shop.Checkout", 0, 600),
				ConfigPlanChecks: empty,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("glb_monitor.grpc", "service", "shop.Checkout"),
					resource.TestCheckResourceAttr("glb_monitor.grpc", "tls", "true"),
					resource.TestCheckResourceAttr("glb_monitor.icmp", "echo_count", "5"),
					resource.TestCheckResourceAttr("glb_monitor.icmp", "max_loss", "0"),
					resource.TestCheckResourceAttr("glb_monitor.feed", "ttl", "600"),
					resource.TestCheckResourceAttr("data.glb_monitor.feed", "id", "tf-feed"),
					resource.TestCheckResourceAttr("data.glb_monitor.feed", "type", "feed"),
					resource.TestCheckResourceAttr("data.glb_monitor.feed", "pool_label", "service"),
					resource.TestCheckResourceAttr("data.glb_monitor.feed", "origin_label", "instance"),
					resource.TestCheckResourceAttr("data.glb_monitor.feed", "ttl", "600"),
					resource.TestCheckResourceAttr("data.glb_monitor.icmp", "echo_count", "5"),
					resource.TestCheckResourceAttr("data.glb_monitor.icmp", "max_loss", "0"),
					func(*terraform.State) error {
						for p, want := range map[string]map[string]any{
							grpc: {"type": "grpc", "port": 50051, "service": "shop.Checkout", "tls": true, "server_name": "checkout.example.com"},
							icmp: {"type": "icmp", "count": 5, "max_loss": nil}, // 0, left out as the API leaves zeros out
							feed: {"type": "feed", "ttl": 600, "pool_label": "service", "origin_label": "instance"},
						} {
							if err := g.apiIs(p, want); err != nil {
								return err
							}
						}
						return nil
					},
				),
			},
			{ResourceName: "glb_monitor.grpc", ImportState: true, ImportStateVerify: true},
			{ResourceName: "glb_monitor.icmp", ImportState: true, ImportStateVerify: true},
			{ResourceName: "glb_monitor.feed", ImportState: true, ImportStateVerify: true, ImportStateId: "tf alerts"},
			{
				Config: typedMonitorsConfig(g, "shop.Cart", 40, 120),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("glb_monitor.grpc", plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction("glb_monitor.icmp", plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction("glb_monitor.feed", plancheck.ResourceActionUpdate),
					},
					PostApplyPostRefresh: empty.PostApplyPostRefresh,
				},
				Check: func(*terraform.State) error {
					for p, want := range map[string]map[string]any{
						grpc: {"service": "shop.Cart", "tls": true},
						icmp: {"max_loss": 40, "count": 5},
						feed: {"ttl": 120, "origin_label": "instance"},
					} {
						if err := g.apiIs(p, want); err != nil {
							return err
						}
					}
					return nil
				},
			},
			{
				PreConfig: func() { g.patch(feed, map[string]any{"origin_label": "host", "ttl": 30}) },
				Config:    typedMonitorsConfig(g, "shop.Cart", 40, 120),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("glb_monitor.feed", plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction("glb_monitor.grpc", plancheck.ResourceActionNoop),
					},
					PostApplyPostRefresh: empty.PostApplyPostRefresh,
				},
				Check: func(*terraform.State) error {
					return g.apiIs(feed, map[string]any{"origin_label": "instance", "ttl": 120})
				},
			},
		},
	})
}
