package provider

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/glb-dns/glb/terraform-provider-glb/internal/client"
)

// apiSource reads one answer of the API: the object at path, or a list
// put under the attribute wrap. The configuration's own attributes (the
// zone asked about) are kept as given.
type apiSource struct {
	name   string
	schema dschema.Schema
	path   func(config tftypes.Value) string
	wrap   string
	c      *client.Client
}

func (d *apiSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + d.name
}

func (d *apiSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = d.schema
}

func (d *apiSource) Configure(_ context.Context, req datasource.ConfigureRequest, _ *datasource.ConfigureResponse) {
	if c, ok := req.ProviderData.(*client.Client); ok {
		d.c = c
	}
}

func (d *apiSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	p := d.path(req.Config.Raw)
	var result any
	if _, err := d.c.Do(ctx, http.MethodGet, p, nil, "", &result); err != nil {
		resp.Diagnostics.AddError("Reading glb_"+d.name, err.Error())
		return
	}
	obj, _ := result.(map[string]any)
	if d.wrap != "" {
		obj = map[string]any{d.wrap: result}
	}
	var config map[string]tftypes.Value
	_ = req.Config.Raw.As(&config)
	for n, v := range config {
		if j, ok, _ := toJSON(v); ok {
			obj[n] = j
		}
	}
	t := resp.State.Schema.Type().TerraformType(ctx)
	v, err := fromJSON(t, obj, req.Config.Raw)
	if err != nil {
		resp.Diagnostics.AddError("Reading glb_"+d.name, err.Error())
		return
	}
	resp.State.Raw = v
}

func regionsSource() datasource.DataSource {
	return &apiSource{name: "regions", wrap: "regions", path: func(tftypes.Value) string { return "/regions" },
		schema: dschema.Schema{
			Description: "The thirteen client regions geo steering, the preview and the traffic counts place clients by, in order.",
			Attributes: map[string]dschema.Attribute{
				"regions": dschema.ListNestedAttribute{Computed: true, Description: "Each region.",
					NestedObject: dschema.NestedAttributeObject{Attributes: map[string]dschema.Attribute{
						"code":         dschema.StringAttribute{Computed: true, Description: "The region code (`WNAM`, `WEU`...), as `region_pools` keys take it."},
						"name":         dschema.StringAttribute{Computed: true, Description: "Its name."},
						"latitude":     dschema.NumberAttribute{Computed: true, Description: "Latitude of the centre its clients are placed at."},
						"longitude":    dschema.NumberAttribute{Computed: true, Description: "Longitude of that centre."},
						"countries":    dschema.ListAttribute{Computed: true, ElementType: types.StringType, Description: "ISO 3166-1 alpha-2 codes of the countries wholly in it."},
						"subdivisions": dschema.ListAttribute{Computed: true, ElementType: types.StringType, Description: "ISO 3166-2 codes of the US and Canadian subdivisions in it."},
					}}},
			},
		}}
}

func dnssecDSSource() datasource.DataSource {
	return &apiSource{name: "dnssec_ds",
		path: func(config tftypes.Value) string {
			return "/zones/" + url.PathEscape(member(config, "zone")) + "/dnssec"
		},
		schema: dschema.Schema{
			Description: "A signed zone's DS records, to give its parent (a `glb_zone` with `dnssec = { enabled = true }`).",
			Attributes: map[string]dschema.Attribute{
				"zone":    dschema.StringAttribute{Required: true, Description: "The zone's id."},
				"name":    dschema.StringAttribute{Computed: true, Description: "The zone's name."},
				"enabled": dschema.BoolAttribute{Computed: true, Description: "DNSSEC is on for the zone."},
				"signing": dschema.BoolAttribute{Computed: true, Description: "Enabled and an active key exists: answers to DO queries are signed."},
				"ds":      dschema.ListAttribute{Computed: true, ElementType: types.StringType, Description: "DS records (SHA-256, presentation format) of the active key and of a key being rolled in."},
			},
		}}
}
