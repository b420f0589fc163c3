package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/glb-dns/glb/terraform-provider-glb/internal/client"
)

// TestSchemasAcceptedByTerraform asks the provider for its schemas as the
// CLI does first: the framework refuses there what Terraform would (an
// attribute named count, for_each, depends_on...), which otherwise only
// an acceptance test finds.
func TestSchemasAcceptedByTerraform(t *testing.T) {
	server, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := server.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			t.Errorf("%s: %s", d.Summary, d.Detail)
		}
	}
	if len(resp.ResourceSchemas) == 0 {
		t.Error("no resource schemas")
	}
}

// A renamed attribute is an attribute of the kind's schema, and the
// member it stands for is not one.
func TestRenamedAttributes(t *testing.T) {
	for _, k := range []kind{zoneKind, monitorKind, poolKind, loadBalancerKind, networkKind, tsigKeyKind,
		tokenKind, notificationKind, shiftKind, safetyRulesKind} {
		for attr, member := range k.renamed {
			if _, ok := k.schema.Attributes[attr]; !ok {
				t.Errorf("glb_%s: renamed attribute %s is not in the schema", k.name, attr)
			}
			if _, ok := k.schema.Attributes[member]; ok {
				t.Errorf("glb_%s: %s is both an attribute and the member %s stands for", k.name, member, attr)
			}
		}
	}
	// Through the resource's own write and read.
	r := &genericResource{k: monitorKind}
	ctx := context.Background()
	st, err := r.state(ctx, client.Object{"id": "m", "type": "icmp", "count": json.Number("5")}, tftypes.NewValue(r.objectType(ctx), nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := member(st, "echo_count"); got != "5" {
		t.Errorf("a monitor's count 5 is read as echo_count %q", got)
	}
	body, err := r.body(st)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := body["echo_count"]; ok || fmt.Sprint(body["count"]) != "5" {
		t.Errorf("echo_count 5 is sent as %v", body)
	}
}
