package provider

import (
	"fmt"
	"net/http"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/glb-dns/glb/internal/testnode"
)

func accessConfig(g *glb, keyTypes, scopes string, maxPools int) string {
	return g.provider() + fmt.Sprintf(`
resource "glb_zone" "z" {
  name        = "acc.example.com"
  nameservers = ["ns1.acc.example.com"]
}

resource "glb_tsig_key" "acme" {
  name   = "acme"
  grants = [{ zone = glb_zone.z.id, name = "www.acc.example.com", match = "acme-challenge", types = [%s] }]
}

resource "glb_token" "ci" {
  name   = "ci"
  scopes = [%s]
}

resource "glb_safety_rules" "global" {
  max_shifted_pools = %d
}
`, keyTypes, scopes, maxPools)
}

var secretSet = regexp.MustCompile(`^.{16,}$`)

// TestAccAccess: TSIG keys and tokens, whose secrets are shown once and
// which the API cannot change in place (a change replaces them), and the
// global safety rules, one object updated by PUT with If-Match. Each is
// created, imported (by name; the rules as "global"), changed, drifted and
// destroyed.
func TestAccAccess(t *testing.T) {
	g := startGLB(t)
	var secret string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		CheckDestroy: func(s *terraform.State) error {
			if err := g.gone("/tsig_keys/acme", "/tokens/ci")(s); err != nil {
				return err
			}
			return g.apiIs("/safety/rules", map[string]any{"max_shifted_pools": 0})
		},
		Steps: []resource.TestStep{
			{
				Config: accessConfig(g, `"TXT"`, `"read"`, 2),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("glb_tsig_key.acme", "algorithm", "hmac-sha256"),
					resource.TestMatchResourceAttr("glb_tsig_key.acme", "secret", secretSet),
					resource.TestCheckResourceAttr("glb_safety_rules.global", "max_shifted_zones", "0"),
					resource.TestCheckResourceAttrWith("glb_token.ci", "secret", func(v string) error {
						// The secret is the token: it reads, and may not write.
						secret = v
						api := testnode.API{Base: g.api + "/api/v1", Token: v}
						if status, _, _ := api.Do(t, http.MethodGet, "/zones", nil); status != http.StatusOK {
							return fmt.Errorf("GET /zones with the token's secret: %d", status)
						}
						if status, _, _ := api.Do(t, http.MethodPost, "/networks", map[string]any{"cidr": "10.0.0.0/8"}); status != http.StatusForbidden {
							return fmt.Errorf("POST /networks with a read token: %d, want 403", status)
						}
						return nil
					}),
					func(*terraform.State) error { return g.apiIs("/safety/rules", map[string]any{"max_shifted_pools": 2}) },
				),
			},
			// The secrets are shown once: an import has none to verify.
			{ResourceName: "glb_tsig_key.acme", ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: []string{"secret"}},
			// last_used_on moved when the check above used the token.
			{ResourceName: "glb_token.ci", ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: []string{"secret", "last_used_on"}},
			{ResourceName: "glb_safety_rules.global", ImportState: true, ImportStateVerify: true, ImportStateId: "global"},
			{
				Config: accessConfig(g, `"TXT"`, `"read"`, 2),
				Check: resource.TestCheckResourceAttrWith("glb_token.ci", "secret", func(v string) error {
					if v != secret {
						return fmt.Errorf("the secret changed on a refresh")
					}
					return nil
				}),
			},
			{
				// No update in place: the key and the token are replaced,
				// the rules updated.
				Config: accessConfig(g, `"TXT", "A"`, `"write"`, 3),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("glb_tsig_key.acme", plancheck.ResourceActionReplace),
					plancheck.ExpectResourceAction("glb_token.ci", plancheck.ResourceActionReplace),
					plancheck.ExpectResourceAction("glb_safety_rules.global", plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttrWith("glb_token.ci", "secret", func(v string) error {
						if v == secret || v == "" {
							return fmt.Errorf("the replaced token kept its secret")
						}
						return nil
					}),
					func(*terraform.State) error {
						if err := g.apiIs("/tsig_keys/acme", map[string]any{"grants.0.types": []string{"TXT", "A"}}); err != nil {
							return err
						}
						return g.apiIs("/safety/rules", map[string]any{"max_shifted_pools": 3})
					},
				),
			},
			{
				PreConfig: func() {
					if status, res := g.call(http.MethodPut, "/safety/rules", map[string]any{"max_shifted_pools": 9}); status != http.StatusOK {
						t.Fatalf("PUT /safety/rules: %d %v", status, res)
					}
				},
				Config: accessConfig(g, `"TXT", "A"`, `"write"`, 3),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("glb_safety_rules.global", plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error { return g.apiIs("/safety/rules", map[string]any{"max_shifted_pools": 3}) },
			},
			{
				Config: accessConfig(g, `"TXT", "A"`, `"write"`, 4),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					concurrentPut{g, "/safety/rules", map[string]any{"max_shifted_pools": 7}},
				}},
				ExpectError: staleWrite,
			},
			{
				Config: accessConfig(g, `"TXT", "A"`, `"write"`, 4),
				Check:  func(*terraform.State) error { return g.apiIs("/safety/rules", map[string]any{"max_shifted_pools": 4}) },
			},
		},
	})
}
