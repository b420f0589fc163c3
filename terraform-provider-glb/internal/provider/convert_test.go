package provider

import (
	"context"
	"encoding/json"
	"math/big"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/glb-dns/glb/terraform-provider-glb/internal/client"
)

// A number the server answers is the value a configuration that wrote it
// holds: Terraform reads 0.3 as 512 bits of it, and so must the provider,
// or every apply reports an inconsistent result.
func TestNumbersReadAsConfigurationsWriteThem(t *testing.T) {
	for _, s := range []string{"0.3", "0.7", "1", "30", "50.11", "-115", "0.8"} {
		hcl, _, err := big.ParseFloat(s, 10, 512, big.ToNearestEven)
		if err != nil {
			t.Fatal(err)
		}
		v, err := fromJSON(tftypes.Number, json.Number(s), tftypes.Value{})
		if err != nil {
			t.Fatal(err)
		}
		if !v.Equal(tftypes.NewValue(tftypes.Number, hcl)) {
			t.Errorf("%s read back as %v, not as the configuration's value", s, v)
		}
		// And written as the server stores it.
		j, _, _ := toJSON(tftypes.NewValue(tftypes.Number, hcl))
		if j.(json.Number).String() != s {
			t.Errorf("%s written as %v", s, j)
		}
	}
}

// Where the configuration wrote nothing, an empty list or map the server
// answers stays null, so that a plan never shows [] against null; where
// it wrote [], a server's null stays [].
func TestEmptyCollections(t *testing.T) {
	list := tftypes.List{ElementType: tftypes.String}
	null := tftypes.NewValue(list, nil)
	empty := tftypes.NewValue(list, []tftypes.Value{})
	for _, c := range []struct {
		name        string
		j           any
		prior, want tftypes.Value
	}{
		{"[] where null was", []any{}, null, null},
		{"null where [] was", nil, empty, empty},
		{"[] computed", []any{}, tftypes.NewValue(list, tftypes.UnknownValue), empty},
		{"values", []any{"a"}, null, tftypes.NewValue(list, []tftypes.Value{tftypes.NewValue(tftypes.String, "a")})},
	} {
		got, err := fromJSON(list, c.j, c.prior)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// Unknown and null members are left out of a body, so that the server
// fills its defaults.
func TestBodyLeavesOutUnknowns(t *testing.T) {
	obj := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"ttl": tftypes.Number, "name": tftypes.String, "description": tftypes.String}}
	v := tftypes.NewValue(obj, map[string]tftypes.Value{
		"ttl":         tftypes.NewValue(tftypes.Number, tftypes.UnknownValue),
		"name":        tftypes.NewValue(tftypes.String, "www"),
		"description": tftypes.NewValue(tftypes.String, nil),
	})
	j, _, err := toJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(j)
	if string(b) != `{"name":"www"}` {
		t.Errorf("body %s, want only the known members", b)
	}
}

// The API leaves a monitor's fields of other types out at their zero
// value: an import (no prior state) reads them as that zero, as a
// configuration that writes max_loss = 0 holds it, not as null.
func TestMonitorZerosReadOnImport(t *testing.T) {
	r := &genericResource{k: monitorKind}
	ctx := context.Background()
	st, err := r.state(ctx, client.Object{"id": "m", "type": "icmp", "timeout": json.Number("5")}, tftypes.NewValue(r.objectType(ctx), nil))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]tftypes.Value
	if err := st.As(&m); err != nil {
		t.Fatal(err)
	}
	for _, z := range monitorKind.zeros {
		if m[z].IsNull() {
			t.Errorf("%s absent from the answer is null, not its zero", z)
		}
	}
	if member(st, "max_loss") != "0" || member(st, "pool_label") != "" || !m["description"].IsNull() {
		t.Errorf("max_loss %q, pool_label %q, description %v", member(st, "max_loss"), member(st, "pool_label"), m["description"])
	}
}
