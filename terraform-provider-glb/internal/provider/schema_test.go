package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/glb-dns/glb/pools"
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

// TestOmittedZerosReadAsZero: every scalar member glb's own types leave
// out of an answer at its zero value (omitempty) is read as that zero
// (the attribute states its default or is in the kind's zeros), or an
// import of an object written with that zero plans a change. The types
// are the API's, from this checkout, as the acceptance tests' glbd.
func TestOmittedZerosReadAsZero(t *testing.T) {
	for _, c := range []struct {
		k kind
		v any
	}{
		{zoneKind, pools.Zone{}}, {monitorKind, pools.Monitor{}}, {poolKind, pools.Pool{}},
		{loadBalancerKind, pools.LoadBalancer{}}, {networkKind, pools.Network{}},
	} {
		attrNames := map[string]string{}
		for attr, m := range c.k.renamed {
			attrNames[m] = attr
		}
		zeros := c.k.reader().zeros
		var walk func(reflect.Type, string, map[string]schema.Attribute)
		walk = func(rt reflect.Type, at string, attrs map[string]schema.Attribute) {
			for i := range rt.NumField() {
				f := rt.Field(i)
				if f.Anonymous {
					walk(f.Type, at, attrs)
					continue
				}
				name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
				if a, ok := attrNames[name]; ok && at == "" {
					name = a
				}
				a, ok := attrs[name]
				if !ok {
					continue // TestSchemasFollowOpenAPI's business
				}
				p := join(at, name)
				ft := f.Type
				for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
					ft = ft.Elem()
				}
				switch n := a.(type) {
				case schema.SingleNestedAttribute:
					if ft.Kind() == reflect.Struct {
						walk(ft, p, n.Attributes)
					}
					continue
				case schema.ListNestedAttribute:
					if ft.Kind() == reflect.Struct {
						walk(ft, p, n.NestedObject.Attributes)
					}
					continue
				}
				k := f.Type.Kind() // a pointer or a slice is left out as null, not as a zero
				scalar := k == reflect.String || k == reflect.Bool || (k >= reflect.Int && k <= reflect.Float64)
				if scalar && strings.Contains(opts, "omitempty") && !zeros[p] {
					t.Errorf("glb_%s.%s: the API leaves it out at its zero value; put it in the kind's zeros or give it a default", c.k.name, p)
				}
			}
		}
		walk(reflect.TypeOf(c.v), "", c.k.schema.Attributes)
	}
}
