// Package provider is the Terraform (and OpenTofu) provider of glb: every
// object an operator writes through glb's REST API as a resource, and what
// a configuration reads from it as data sources.
package provider

import (
	"context"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/glb-dns/glb/terraform-provider-glb/internal/client"
)

type glbProvider struct{ version string }

// New returns the provider's factory; version is the release's.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &glbProvider{version: version} }
}

type providerModel struct {
	Server types.String `tfsdk:"server"`
	Token  types.String `tfsdk:"token"`
	CAFile types.String `tfsdk:"ca_file"`
}

func (p *glbProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "glb"
	resp.Version = p.version
}

func (p *glbProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Manages glb, the authoritative DNS global server load balancer, through its REST API.",
		Attributes: map[string]schema.Attribute{
			"server": schema.StringAttribute{Optional: true,
				Description: "The API's base URL, such as `https://glb.example.com:8443`; else `GLB_SERVER`."},
			"token": schema.StringAttribute{Optional: true, Sensitive: true,
				Description: "An API token with the scopes the configuration needs (`write`; `admin` for TSIG keys, tokens and safety rules; `integrations` for notifications); else `GLB_API_TOKEN`."},
			"ca_file": schema.StringAttribute{Optional: true,
				Description: "A PEM file of CA certificates trusted for the API's certificate besides the system's; else `GLB_CA_FILE`."},
		},
	}
}

func (p *glbProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var m providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	server := setting(m.Server, "GLB_SERVER")
	if server == "" {
		resp.Diagnostics.AddAttributeError(path.Root("server"), "No glb server",
			"Set server in the provider block or GLB_SERVER in the environment, such as https://glb.example.com:8443.")
		return
	}
	c, err := client.New(server, setting(m.Token, "GLB_API_TOKEN"), setting(m.CAFile, "GLB_CA_FILE"))
	if err != nil {
		resp.Diagnostics.AddError("Configuring the glb provider", err.Error())
		return
	}
	resp.ResourceData = c
	resp.DataSourceData = c
}

// setting is v when the configuration sets it, else the environment's.
func setting(v types.String, env string) string {
	if !v.IsNull() && !v.IsUnknown() && v.ValueString() != "" {
		return v.ValueString()
	}
	return os.Getenv(env)
}

func (p *glbProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		newResource(zoneKind), newResource(monitorKind), newResource(poolKind), newResource(loadBalancerKind),
		newResource(networkKind), newResource(tsigKeyKind), newResource(tokenKind), newResource(notificationKind),
		newResource(shiftKind), newResource(safetyRulesKind),
	}
}

func (p *glbProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		newObjectSource(zoneKind), newObjectSource(monitorKind), newObjectSource(poolKind), newObjectSource(loadBalancerKind),
		regionsSource, dnssecDSSource,
	}
}
