package provider

import (
	"context"
	"fmt"
	"net/url"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/glb-dns/glb/terraform-provider-glb/internal/client"
)

// objectSource reads one object of a kind, named by id or by name, with
// every attribute of the kind's resource computed: a configuration can
// then use what another team's configuration (or glbctl) made.
type objectSource struct {
	k kind
	c *client.Client
}

func newObjectSource(k kind) func() datasource.DataSource {
	return func() datasource.DataSource { return &objectSource{k: k} }
}

func (d *objectSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + d.k.name
}

func (d *objectSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := computedAttrs(d.k.schema.Attributes)
	attrs["id"] = dschema.StringAttribute{Optional: true, Computed: true, Description: "The object's id; give it or `" + d.k.byName + "`."}
	attrs[d.k.byName] = dschema.StringAttribute{Optional: true, Computed: true, Description: "The object's " + d.k.byName + "; give it or `id`."}
	resp.Schema = dschema.Schema{
		Description: fmt.Sprintf("Reads a %s by id or by %s. %s", d.k.name, d.k.byName, d.k.schema.Description),
		Attributes:  attrs,
	}
}

func (d *objectSource) Configure(_ context.Context, req datasource.ConfigureRequest, _ *datasource.ConfigureResponse) {
	if c, ok := req.ProviderData.(*client.Client); ok {
		d.c = c
	}
}

func (d *objectSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	ref := member(req.Config.Raw, "id")
	if ref == "" {
		ref = member(req.Config.Raw, d.k.byName)
	}
	if ref == "" {
		resp.Diagnostics.AddError("glb_"+d.k.name, "give id or "+d.k.byName)
		return
	}
	r := &genericResource{k: d.k, c: d.c}
	id, err := r.resolve(ctx, ref)
	if err != nil {
		resp.Diagnostics.AddError("Reading glb_"+d.k.name+" "+ref, err.Error())
		return
	}
	obj, _, err := d.c.Get(ctx, d.k.path+"/"+url.PathEscape(id))
	if err != nil {
		resp.Diagnostics.AddError("Reading glb_"+d.k.name+" "+ref, err.Error())
		return
	}
	d.k.fromAPI(obj)
	t := resp.State.Schema.Type().TerraformType(ctx)
	v, err := d.k.reader().read(t, obj, tftypes.NewValue(t, nil), "")
	if err != nil {
		resp.Diagnostics.AddError("Reading glb_"+d.k.name+" "+ref, err.Error())
		return
	}
	resp.State.Raw = v
}

// computedAttrs is a resource's attributes as a data source's, all
// computed.
func computedAttrs(in map[string]rschema.Attribute) map[string]dschema.Attribute {
	out := make(map[string]dschema.Attribute, len(in))
	for n, a := range in {
		out[n] = computedAttr(a)
	}
	return out
}

func computedAttr(a rschema.Attribute) dschema.Attribute {
	desc := a.GetDescription()
	switch a := a.(type) {
	case rschema.StringAttribute:
		return dschema.StringAttribute{Computed: true, Sensitive: a.Sensitive, Description: desc}
	case rschema.NumberAttribute:
		return dschema.NumberAttribute{Computed: true, Description: desc}
	case rschema.BoolAttribute:
		return dschema.BoolAttribute{Computed: true, Description: desc}
	case rschema.ListAttribute:
		return dschema.ListAttribute{Computed: true, ElementType: a.ElementType, Description: desc}
	case rschema.MapAttribute:
		return dschema.MapAttribute{Computed: true, ElementType: a.ElementType, Description: desc}
	case rschema.SingleNestedAttribute:
		return dschema.SingleNestedAttribute{Computed: true, Attributes: computedAttrs(a.Attributes), Description: desc}
	case rschema.ListNestedAttribute:
		return dschema.ListNestedAttribute{Computed: true, Description: desc,
			NestedObject: dschema.NestedAttributeObject{Attributes: computedAttrs(a.NestedObject.Attributes)}}
	}
	panic(fmt.Sprintf("no data source form for %T", a))
}
