package provider

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

func shiftConfig(g *glb, hook, duration string) string {
	return g.provider() + fmt.Sprintf(`
resource "glb_zone" "z" {
  name        = "shift.example.com"
  nameservers = ["ns1.shift.example.com"]
}

resource "glb_pool" "a" {
  name    = "a"
  origins = [{ name = "a1", address = "127.0.0.51" }]
}

resource "glb_pool" "b" {
  name    = "b"
  origins = [{ name = "b1", address = "127.0.0.52" }]
}

resource "glb_load_balancer" "www" {
  zone          = glb_zone.z.id
  name          = "www.shift.example.com"
  default_pools = [glb_pool.a.id, glb_pool.b.id]
  fallback_pool = glb_pool.b.id
}

resource "glb_shift" "drain_a" {
  target         = { pool = glb_pool.a.id }
  load_balancers = [glb_load_balancer.www.id]
  reason         = "drain a for maintenance"
  duration       = %q
}

resource "glb_notification" "oncall" {
  name           = "oncall"
  url            = %q
  events         = ["shift", "failover"]
  load_balancers = [glb_load_balancer.www.id]
}
`, duration, hook)
}

// TestAccShiftNotification: a shift with its expiry, which dig sees take
// the pool out of the answers and the destroy end; a notification
// subscription (its secret shown once), updated in place, imported by
// name, drifted.
func TestAccShiftNotification(t *testing.T) {
	// The subscription's receiver, on loopback (which glbd is told it may
	// reach); it only has to answer.
	g := startGLB(t, "--outbound-allow", "127.0.0.1")
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer hook.Close()
	var shiftID, notifID string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		CheckDestroy: func(s *terraform.State) error {
			if err := g.gone("/notifications/" + notifID)(s); err != nil {
				return err
			}
			// A shift ended early stays listed, ended.
			return g.apiIs("/shifts/"+shiftID, map[string]any{"status": "ended"})
		},
		Steps: []resource.TestStep{
			{
				Config: shiftConfig(g, hook.URL+"/a", "2h"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("glb_shift.drain_a", "status", "active"),
					resource.TestCheckResourceAttrSet("glb_shift.drain_a", "expires_at"),
					resource.TestCheckResourceAttrSet("glb_shift.drain_a", "starts_at"),
					resource.TestCheckResourceAttr("glb_notification.oncall", "format", "standard"),
					resource.TestMatchResourceAttr("glb_notification.oncall", "secret", secretSet),
					resource.TestCheckResourceAttrWith("glb_notification.oncall", "id", func(v string) error { notifID = v; return nil }),
					resource.TestCheckResourceAttrWith("glb_shift.drain_a", "id", func(v string) error {
						shiftID = v
						return g.answers("www.shift.example.com", "A", "127.0.0.52")
					}),
				),
			},
			{ResourceName: "glb_shift.drain_a", ImportState: true, ImportStateVerify: true},
			{ResourceName: "glb_notification.oncall", ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: []string{"secret"}},
			{ResourceName: "glb_notification.oncall", ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: []string{"secret"}, ImportStateId: "oncall"},
			{
				// The subscription is updated in place; the shift's new
				// duration replaces it (the API has no update of shifts).
				Config: shiftConfig(g, hook.URL+"/b", "3h"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("glb_notification.oncall", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("glb_shift.drain_a", plancheck.ResourceActionReplace),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					func(*terraform.State) error {
						if err := g.apiIs("/notifications/"+notifID, map[string]any{"url": hook.URL + "/b"}); err != nil {
							return err
						}
						// The replaced shift was ended, not left in force.
						return g.apiIs("/shifts/"+shiftID, map[string]any{"status": "ended"})
					},
					resource.TestCheckResourceAttrWith("glb_shift.drain_a", "id", func(v string) error {
						shiftID = v
						return g.answers("www.shift.example.com", "A", "127.0.0.52")
					}),
				),
			},
			{
				PreConfig: func() {
					if status, res := g.call(http.MethodPut, "/notifications/"+notifID, map[string]any{"name": "oncall", "url": hook.URL + "/c", "events": []string{"shift"}}); status != http.StatusOK {
						t.Fatalf("PUT notification: %d %v", status, res)
					}
				},
				Config: shiftConfig(g, hook.URL+"/b", "3h"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("glb_notification.oncall", plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					return g.apiIs("/notifications/"+notifID, map[string]any{"url": hook.URL + "/b", "events": []string{"shift", "failover"}})
				},
			},
		},
	})
}
