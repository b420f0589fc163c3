package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/glb-dns/glb/internal/testnode"
)

// The acceptance tests (TF_ACC=1) run the real OpenTofu (or Terraform)
// CLI named by TF_ACC_TERRAFORM_PATH against a real glbd built from this
// checkout: make test-terraform builds OpenTofu from its Go module and
// sets both. Without TF_ACC they skip, as terraform-plugin-testing's do.
var glbdBin string

func TestMain(m *testing.M) {
	if os.Getenv("TF_ACC") == "" {
		os.Exit(m.Run())
	}
	os.Exit(testnode.Run(m, []string{"dig", "go"}, testnode.Binary{Dir: "../../..", Pkg: "./cmd/glbd", Path: &glbdBin}))
}

// providers serves this provider in process to the CLI the test runs.
var providers = map[string]func() (tfprotov6.ProviderServer, error){
	"glb": providerserver.NewProtocol6WithError(New("test")()),
}

const adminToken = "tf-acc-bootstrap-token"

// glb is a running glbd reached as its bootstrap admin.
type glb struct {
	t        *testing.T
	dns, api string
}

func startGLB(t *testing.T, args ...string) *glb {
	// resource.Test would skip without TF_ACC, but only after glbd was
	// asked to start, and TestMain builds it only with TF_ACC.
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1 (make test-terraform)")
	}
	n := testnode.StartGLBD(t, glbdBin, append([]string{"--api-token", adminToken}, args...)...)
	return &glb{t: t, dns: n.DNS, api: n.API}
}

// provider is the provider block that reaches this glbd.
func (g *glb) provider() string {
	return fmt.Sprintf("provider \"glb\" {\n  server = %q\n  token  = %q\n}\n", g.api, adminToken)
}

// call is an operator's request outside Terraform; path is under /api/v1.
func (g *glb) call(method, path string, body any) (int, map[string]any) {
	status, _, b := testnode.API{Base: g.api + "/api/v1", Token: adminToken}.Do(g.t, method, path, body)
	var res map[string]any
	testnode.Result(b, &res)
	return status, res
}

func (g *glb) get(path string) map[string]any {
	status, res := g.call(http.MethodGet, path, nil)
	if status != http.StatusOK {
		g.t.Fatalf("GET %s: %d", path, status)
	}
	return res
}

// patch edits an object as an operator would behind Terraform's back.
func (g *glb) patch(path string, body any) {
	g.t.Helper()
	if status, res := g.call(http.MethodPatch, path, body); status != http.StatusOK {
		g.t.Fatalf("PATCH %s: %d %v", path, status, res)
	}
}

// gone is a CheckDestroy: each path answers 404.
func (g *glb) gone(paths ...string) func(*terraform.State) error {
	return func(*terraform.State) error {
		for _, p := range paths {
			if status, _ := g.call(http.MethodGet, p, nil); status != http.StatusNotFound {
				return fmt.Errorf("GET %s after destroy: %d, want 404", p, status)
			}
		}
		return nil
	}
}

// answers polls dig until name's answers of qtype are want (sorted, space
// separated): the API's write reaches DNS once the node has compiled it.
func (g *glb) answers(name, qtype, want string) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		got := testnode.DigShort(g.t, g.dns, name, qtype)
		if got == want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("dig %s %s: %q, want %q", name, qtype, got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// apiIs checks members of the object at path as the API answers them,
// dotted paths into nested objects ("soa.refresh").
func (g *glb) apiIs(path string, want map[string]any) error {
	obj := g.get(path)
	for k, w := range want {
		var v any = obj
		for _, part := range strings.Split(k, ".") {
			switch x := v.(type) {
			case map[string]any:
				v = x[part]
			case []any:
				i, err := strconv.Atoi(part)
				if err != nil || i >= len(x) {
					v = nil
				} else {
					v = x[i]
				}
			default:
				v = nil
			}
		}
		gb, _ := json.Marshal(v)
		wb, _ := json.Marshal(w)
		if string(gb) != string(wb) {
			return fmt.Errorf("%s %s: %s, want %s", path, k, gb, wb)
		}
	}
	return nil
}

// concurrentWrite is a pre-apply plan check that edits an object through
// the API after the plan was made and before it is applied: the apply of
// that saved plan then carries a stale If-Match and must fail.
type concurrentWrite struct {
	g    *glb
	path func() string
	body any
}

func (c concurrentWrite) CheckPlan(_ context.Context, _ plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	if status, res := c.g.call(http.MethodPatch, c.path(), c.body); status != http.StatusOK {
		resp.Error = fmt.Errorf("PATCH %s: %d %v", c.path(), status, res)
	}
}

// concurrentPut is concurrentWrite for an object the API replaces only
// (the global safety rules).
type concurrentPut struct {
	g    *glb
	path string
	body any
}

func (c concurrentPut) CheckPlan(_ context.Context, _ plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	if status, res := c.g.call(http.MethodPut, c.path, c.body); status != http.StatusOK {
		resp.Error = fmt.Errorf("PUT %s: %d %v", c.path, status, res)
	}
}

// staleWrite is what an apply over a concurrent change says.
var staleWrite = regexp.MustCompile(`412[\s\S]*changed\s+by\s+someone\s+else`)
