package provider

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/glb-dns/glb/terraform-provider-glb/internal/client"
)

// kind describes one collection of glb's API as a resource. Every
// resource is the same code over a kind: create is POST, read GET, update
// PUT of the whole object with If-Match, delete DELETE with If-Match.
type kind struct {
	// name is the resource's name after "glb_".
	name string
	// path is the collection's path under /api/v1.
	path string
	// byName is the member an import may give instead of the id (a
	// zone's, pool's or load balancer's name); "" when only the id names
	// one.
	byName string
	schema schema.Schema
	// readOnly members are the server's (revision, timestamps, a zone's
	// serial): never sent, and not kept from one state to the next.
	readOnly []string
	// key is the member the API names an object by in its path when that
	// is not id (a TSIG key's or a token's name); id then holds it too.
	key string
	// shownOnce members are in the create's answer only (a secret): a
	// read keeps the state's.
	shownOnce []string
	// replaceOnly kinds have no PUT: any change replaces the object.
	replaceOnly bool
	// singleton is the id of the one object a kind has (the global safety
	// rules, at path itself): created and updated by PUT, and "deleted"
	// by a PUT of reset.
	singleton string
	reset     map[string]any
	// dnsNames are members the server stores canonical (lower case, no
	// final dot): a configuration's spelling of the same name is kept,
	// never a diff.
	dnsNames []string
	// gone says a DELETE's error means the object no longer is (a shift
	// already ended answers 400).
	gone func(err error) bool
	// renamed are the top-level attributes named otherwise than their
	// API member, attribute to member: a name Terraform reserves for
	// itself (count) cannot be an attribute's.
	renamed map[string]string
	// zeros are the paths (as reader's) of attributes the API leaves
	// out of its answers at their zero value (omitempty: a monitor's
	// fields of other types, an owner): absent is that zero, also where
	// Terraform holds nothing yet (an import), as for attributes with a
	// stated default.
	zeros []string
}

// reader reads answers for this kind (see reader).
func (k kind) reader() reader {
	z := defaults(k.schema.Attributes, "", nil)
	for _, m := range k.zeros {
		z[m] = true
	}
	return reader{zeros: z}
}

// toAPI renames the attributes of a body to the API's members.
func (k kind) toAPI(m map[string]any) {
	for attr, member := range k.renamed {
		if v, ok := m[attr]; ok {
			m[member] = v
			delete(m, attr)
		}
	}
}

// fromAPI renames the members of an answer to the attributes.
func (k kind) fromAPI(obj map[string]any) {
	for attr, member := range k.renamed {
		if v, ok := obj[member]; ok {
			obj[attr] = v
			delete(obj, member)
		}
	}
}

type genericResource struct {
	k kind
	c *client.Client
}

var (
	_ resource.ResourceWithConfigure   = (*genericResource)(nil)
	_ resource.ResourceWithImportState = (*genericResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*genericResource)(nil)
)

func newResource(k kind) func() resource.Resource {
	return func() resource.Resource { return &genericResource{k: k} }
}

func (r *genericResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + r.k.name
}

func (r *genericResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = r.k.schema
}

func (r *genericResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if c, ok := req.ProviderData.(*client.Client); ok {
		r.c = c
	}
}

func (r *genericResource) objectType(ctx context.Context) tftypes.Object {
	return r.k.schema.Type().TerraformType(ctx).(tftypes.Object)
}

// body is the JSON the API takes for plan: every member Terraform knows,
// without the server's own.
func (r *genericResource) body(plan tftypes.Value) (map[string]any, error) {
	j, _, err := toJSON(plan)
	if err != nil {
		return nil, err
	}
	m, _ := j.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	for _, ro := range append(r.k.readOnly, r.k.shownOnce...) {
		delete(m, ro)
	}
	if !r.clientID() {
		delete(m, "id")
	}
	r.k.toAPI(m)
	return m, nil
}

// clientID says the API takes the id in a body (a client may choose it).
func (r *genericResource) clientID() bool {
	a, ok := r.k.schema.Attributes["id"].(schema.StringAttribute)
	return ok && a.Optional
}

// state is the object the API answered as this resource's state, prior
// being what Terraform held (see fromJSON).
func (r *genericResource) state(ctx context.Context, obj client.Object, prior tftypes.Value) (tftypes.Value, error) {
	r.k.fromAPI(obj)
	if _, ok := obj["id"]; !ok {
		switch {
		case r.k.singleton != "":
			obj["id"] = r.k.singleton
		case r.k.key != "":
			obj["id"] = obj[r.k.key]
		}
	}
	for _, m := range r.k.dnsNames {
		if n, ok := obj[m].(string); ok {
			if p := member(prior, m); p != "" && sameName(p, n) {
				obj[m] = p
			}
		}
	}
	for _, m := range r.k.shownOnce {
		if _, ok := obj[m]; !ok {
			if v := member(prior, m); v != "" {
				obj[m] = v
			}
		}
	}
	return r.k.reader().read(r.objectType(ctx), obj, prior, "")
}

// defaults are the paths of the attributes with a stated default (see
// reader).
func defaults(attrs map[string]schema.Attribute, at string, out map[string]bool) map[string]bool {
	if out == nil {
		out = map[string]bool{}
	}
	for n, a := range attrs {
		switch a := a.(type) {
		case schema.StringAttribute:
			out[join(at, n)] = a.Default != nil
		case schema.NumberAttribute:
			out[join(at, n)] = a.Default != nil
		case schema.BoolAttribute:
			out[join(at, n)] = a.Default != nil
		case schema.SingleNestedAttribute:
			defaults(a.Attributes, join(at, n), out)
		case schema.ListNestedAttribute:
			defaults(a.NestedObject.Attributes, join(at, n), out)
		}
	}
	return out
}

// member reads a top-level attribute of v as a string ("" when null).
func member(v tftypes.Value, name string) string {
	var m map[string]tftypes.Value
	if v.IsNull() || !v.IsKnown() || v.As(&m) != nil {
		return ""
	}
	a, ok := m[name]
	if !ok || a.IsNull() || !a.IsKnown() {
		return ""
	}
	switch {
	case a.Type().Is(tftypes.String):
		var s string
		_ = a.As(&s)
		return s
	case a.Type().Is(tftypes.Number):
		j, _, _ := toJSON(a)
		return fmt.Sprint(j)
	}
	return ""
}

// ifMatch is the ETag of the revision state was read at: a write with it
// is refused (412) when someone wrote the object since, so that an apply
// fails rather than overwrites a change it did not plan with.
func ifMatch(state tftypes.Value) string {
	if rev := member(state, "revision"); rev != "" {
		return `"` + rev + `"`
	}
	return ""
}

func (r *genericResource) item(id string) string {
	if r.k.singleton != "" {
		return r.k.path
	}
	return r.k.path + "/" + url.PathEscape(id)
}

// ModifyPlan makes any change of a kind without PUT a replacement.
func (r *genericResource) ModifyPlan(_ context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if !r.k.replaceOnly || req.State.Raw.IsNull() || req.Plan.Raw.IsNull() {
		return
	}
	var plan, state map[string]tftypes.Value
	if req.Plan.Raw.As(&plan) != nil || req.State.Raw.As(&state) != nil {
		return
	}
	ro := map[string]bool{"id": true}
	for _, m := range append(r.k.readOnly, r.k.shownOnce...) {
		ro[m] = true
	}
	names := make([]string, 0, len(plan))
	for n := range plan {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !ro[n] && plan[n].IsKnown() && !plan[n].Equal(state[n]) {
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root(n))
		}
	}
}

func (r *genericResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	body, err := r.body(req.Plan.Raw)
	if err != nil {
		resp.Diagnostics.AddError("glb_"+r.k.name, err.Error())
		return
	}
	method := http.MethodPost
	if r.k.singleton != "" {
		method = http.MethodPut
	}
	var obj client.Object
	if _, err := r.c.Do(ctx, method, r.k.path, body, "", &obj); err != nil {
		resp.Diagnostics.AddError("Creating glb_"+r.k.name, err.Error())
		return
	}
	st, err := r.state(ctx, obj, req.Plan.Raw)
	if err != nil {
		resp.Diagnostics.AddError("Reading the created glb_"+r.k.name, err.Error())
		return
	}
	resp.State.Raw = st
}

func (r *genericResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	id := member(req.State.Raw, "id")
	obj, _, err := r.c.Get(ctx, r.item(id))
	if client.IsNotFound(err) {
		// Deleted outside Terraform: the next plan creates it again.
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Reading glb_"+r.k.name+" "+id, err.Error())
		return
	}
	st, err := r.state(ctx, obj, req.State.Raw)
	if err != nil {
		resp.Diagnostics.AddError("Reading glb_"+r.k.name+" "+id, err.Error())
		return
	}
	resp.State.Raw = st
}

func (r *genericResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	id := member(req.State.Raw, "id")
	body, err := r.body(req.Plan.Raw)
	if err != nil {
		resp.Diagnostics.AddError("glb_"+r.k.name, err.Error())
		return
	}
	if r.k.replaceOnly {
		resp.Diagnostics.AddError("Updating glb_"+r.k.name+" "+id, "the API cannot change it in place; the plan should have replaced it")
		return
	}
	if r.clientID() {
		body["id"] = id
	}
	var obj client.Object
	if _, err := r.c.Do(ctx, http.MethodPut, r.item(id), body, ifMatch(req.State.Raw), &obj); err != nil {
		resp.Diagnostics.AddError("Updating glb_"+r.k.name+" "+id, err.Error())
		return
	}
	st, err := r.state(ctx, obj, req.Plan.Raw)
	if err != nil {
		resp.Diagnostics.AddError("Reading the updated glb_"+r.k.name+" "+id, err.Error())
		return
	}
	resp.State.Raw = st
}

func (r *genericResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	id := member(req.State.Raw, "id")
	var err error
	if r.k.singleton != "" {
		_, err = r.c.Do(ctx, http.MethodPut, r.k.path, r.k.reset, ifMatch(req.State.Raw), nil)
	} else {
		_, err = r.c.Do(ctx, http.MethodDelete, r.item(id), nil, ifMatch(req.State.Raw), nil)
	}
	if err != nil && !client.IsNotFound(err) && (r.k.gone == nil || !r.k.gone(err)) {
		resp.Diagnostics.AddError("Deleting glb_"+r.k.name+" "+id, err.Error())
	}
}

// ImportState takes an id or, for a kind with names, a name: glb's ids
// are random unless chosen, and an operator knows the names.
func (r *genericResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id, err := r.resolve(ctx, req.ID)
	if err != nil {
		resp.Diagnostics.AddError("Importing glb_"+r.k.name+" "+req.ID, err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), id)...)
}

// resolve finds the id of the object that ref names: its id, else the
// one object whose name is ref.
func (r *genericResource) resolve(ctx context.Context, ref string) (string, error) {
	if r.k.singleton != "" {
		if ref != r.k.singleton {
			return "", fmt.Errorf("there is one %s, imported as %q", r.k.name, r.k.singleton)
		}
		return ref, nil
	}
	_, _, err := r.c.Get(ctx, r.item(ref))
	if err == nil {
		return ref, nil
	}
	if !client.IsNotFound(err) || r.k.byName == "" {
		return "", err
	}
	all, err := r.c.List(ctx, r.k.path)
	if err != nil {
		return "", err
	}
	var ids []string
	for _, o := range all {
		if n, _ := o[r.k.byName].(string); sameName(n, ref) {
			id, _ := o["id"].(string)
			ids = append(ids, id)
		}
	}
	switch len(ids) {
	case 1:
		return ids[0], nil
	case 0:
		return "", fmt.Errorf("no %s has the id or the %s %q", r.k.name, r.k.byName, ref)
	}
	sort.Strings(ids)
	return "", fmt.Errorf("%d %ss have the %s %q (ids %s): import by id", len(ids), r.k.name, r.k.byName, ref, strings.Join(ids, ", "))
}

// sameName compares names as DNS does: letter case and a final dot do
// not matter (a pool's free name compares the same way, harmlessly).
func sameName(a, b string) bool {
	return strings.EqualFold(strings.TrimSuffix(a, "."), strings.TrimSuffix(b, "."))
}
