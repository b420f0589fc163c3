package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
)

// The registry docs (docs/resources, docs/data-sources, docs/index.md)
// are rendered from the schemas' descriptions and the examples, in the
// layout the registries read; TestDocs fails when a file differs from
// what the schemas say, so that the docs cannot fall behind the code.
// UPDATE_DOCS=1 go test -run TestDocs ./internal/provider writes them.

// docAttr is one attribute as the docs list it.
type docAttr struct {
	name, typ, desc     string
	required, computed  bool
	optional, sensitive bool
	nested              map[string]docAttr
}

func TestDocs(t *testing.T) {
	ctx := context.Background()
	p := New("docs")()
	files := map[string]string{}
	for _, f := range p.Resources(ctx) {
		r := f()
		var md resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "glb"}, &md)
		var sr resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &sr)
		attrs := resourceDocs(sr.Schema.Attributes)
		name := strings.TrimPrefix(md.TypeName, "glb_")
		files["resources/"+name+".md"] = render(md.TypeName, "Resource", sr.Schema.Description, attrs,
			"../../examples/resources/"+md.TypeName+"/resource.tf", "../../examples/resources/"+md.TypeName+"/import.sh")
	}
	for _, f := range p.DataSources(ctx) {
		d := f()
		var md datasource.MetadataResponse
		d.Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: "glb"}, &md)
		var sr datasource.SchemaResponse
		d.Schema(ctx, datasource.SchemaRequest{}, &sr)
		attrs := map[string]docAttr{}
		for n, a := range sr.Schema.Attributes {
			attrs[n] = docOf(n, a, a.IsRequired(), a.IsOptional())
		}
		name := strings.TrimPrefix(md.TypeName, "glb_")
		files["data-sources/"+name+".md"] = render(md.TypeName, "Data Source", sr.Schema.Description, attrs,
			"../../examples/data-sources/"+md.TypeName+"/data-source.tf", "")
	}
	files["index.md"] = renderIndex(t)
	for f, want := range files {
		path := filepath.Join("../../docs", f)
		if os.Getenv("UPDATE_DOCS") != "" {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("docs/%s is not what the schema says (UPDATE_DOCS=1 go test -run TestDocs ./internal/provider rewrites it)", f)
		}
	}
}

// docOf describes a (data source form of an) attribute; required and
// optional are the resource's.
func docOf(name string, a dschema.Attribute, required, optional bool) docAttr {
	d := docAttr{name: name, desc: a.GetDescription(), required: required, optional: optional && !required,
		computed: !required && !optional, sensitive: a.IsSensitive()}
	switch a := a.(type) {
	case dschema.StringAttribute:
		d.typ = "String"
	case dschema.NumberAttribute:
		d.typ = "Number"
	case dschema.BoolAttribute:
		d.typ = "Boolean"
	case dschema.ListAttribute:
		d.typ = "List of " + typeName(a.ElementType.String())
	case dschema.MapAttribute:
		d.typ = "Map of " + typeName(a.ElementType.String())
	case dschema.SingleNestedAttribute:
		d.typ = "Attributes"
		d.nested = nestedDocs(a.Attributes)
	case dschema.ListNestedAttribute:
		d.typ = "Attributes List"
		d.nested = nestedDocs(a.NestedObject.Attributes)
	}
	return d
}

func nestedDocs(attrs map[string]dschema.Attribute) map[string]docAttr {
	out := map[string]docAttr{}
	for n, a := range attrs {
		out[n] = docOf(n, a, a.IsRequired(), a.IsOptional())
	}
	return out
}

func typeName(s string) string {
	r := strings.NewReplacer("types.StringType", "String", "types.NumberType", "Number", "types.ListType", "List", "basetypes.", "", "StringType", "String", "NumberType", "Number")
	return r.Replace(s)
}

// resourceDocs describes a resource's attributes, nested ones with their
// own required and optional marks.
func resourceDocs(attrs map[string]rschema.Attribute) map[string]docAttr {
	out := map[string]docAttr{}
	for n, a := range attrs {
		d := docOf(n, computedAttr(a), a.IsRequired(), a.IsOptional())
		switch a := a.(type) {
		case rschema.SingleNestedAttribute:
			d.nested = resourceDocs(a.Attributes)
		case rschema.ListNestedAttribute:
			d.nested = resourceDocs(a.NestedObject.Attributes)
		}
		out[n] = d
	}
	return out
}

func render(typeName, what, desc string, attrs map[string]docAttr, example, importFile string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\npage_title: \"%s %s - glb\"\nsubcategory: \"\"\ndescription: |-\n  %s\n---\n\n", typeName, what, strings.ReplaceAll(desc, "\n", "\n  "))
	fmt.Fprintf(&b, "# %s (%s)\n\n%s\n\n", typeName, what, desc)
	if ex, err := os.ReadFile(example); err == nil {
		fmt.Fprintf(&b, "## Example Usage\n\n```terraform\n%s```\n\n", ex)
	}
	b.WriteString("<!-- schema generated from the provider's schema; do not edit -->\n## Schema\n")
	writeAttrs(&b, attrs, "")
	if importFile != "" {
		if im, err := os.ReadFile(importFile); err == nil {
			fmt.Fprintf(&b, "\n## Import\n\nImport is supported using the following syntax:\n\n```shell\n%s```\n", im)
		}
	}
	return b.String()
}

func writeAttrs(b *strings.Builder, attrs map[string]docAttr, parent string) {
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	var nested []string
	for _, group := range []struct {
		title string
		in    func(docAttr) bool
	}{
		{"Required", func(a docAttr) bool { return a.required }},
		{"Optional", func(a docAttr) bool { return a.optional }},
		{"Read-Only", func(a docAttr) bool { return a.computed }},
	} {
		first := true
		for _, n := range names {
			a := attrs[n]
			if !group.in(a) {
				continue
			}
			if first {
				fmt.Fprintf(b, "\n### %s\n\n", group.title)
				first = false
			}
			typ := a.typ
			if a.sensitive {
				typ += ", Sensitive"
			}
			anchor := ""
			if a.nested != nil {
				anchor = fmt.Sprintf(" (see [below for nested schema](#nestedatt--%s%s))", strings.ReplaceAll(parent, ".", "--"), n)
				nested = append(nested, n)
			}
			fmt.Fprintf(b, "- `%s` (%s) %s%s\n", n, typ, a.desc, anchor)
		}
	}
	for _, n := range nested {
		full := parent + n
		fmt.Fprintf(b, "\n<a id=\"nestedatt--%s\"></a>\n### Nested Schema for `%s`\n", strings.ReplaceAll(full, ".", "--"), full)
		writeAttrs(b, attrs[n].nested, full+".")
	}
}

func renderIndex(t *testing.T) string {
	ex, err := os.ReadFile("../../examples/provider/provider.tf")
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`---
page_title: "glb Provider"
description: |-
  Manages glb, the authoritative DNS global server load balancer, through its REST API.
---

# glb Provider

Manages [glb](https://github.com/glb-dns/glb), the authoritative DNS global server load
balancer, through its REST API: zones, monitors, pools, load balancers, networks, TSIG keys,
tokens, notification subscriptions, shifts and the global safety rules. It works with
Terraform and OpenTofu alike.

Every update and delete sends the object's revision in `+"`If-Match`"+`, so that an apply
fails ("changed by someone else since it was read") rather than overwrites a change made
through the API, glbctl or the console between the refresh and the apply (notification
subscriptions excepted: the API keeps no revision of them). Attributes the
server fills when left out (a pool's `+"`minimum_origins`"+`, a load balancer's `+"`ttl`"+`...)
are computed: they never show as a diff, and keep the server's value when left out. Lists and
maps left out are empty. An attribute of a list element left out (an origin's `+"`weight`"+`)
takes the API's default in the plan itself, since list elements are matched by position.

Every resource imports by id and, where the object has one, by name.

## Example Usage

`+"```terraform\n%s```"+`

## Schema

### Optional

- `+"`server`"+` (String) The API's base URL, such as `+"`https://glb.example.com:8443`"+`; else `+"`GLB_SERVER`"+`.
- `+"`token`"+` (String, Sensitive) An API token with the scopes the configuration needs; else `+"`GLB_API_TOKEN`"+`.
- `+"`ca_file`"+` (String) A PEM file of CA certificates trusted for the API's certificate besides the system's; else `+"`GLB_CA_FILE`"+`.
`, ex)
}
