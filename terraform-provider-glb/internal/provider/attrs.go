package provider

import (
	"math/big"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/numberdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/numberplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Attributes the server fills when the configuration leaves them out are
// Optional and Computed, and keep the value the server holds from one
// plan to the next (UseStateForUnknown): a default is never a diff, and
// an update sends it back rather than resetting it. Attributes the server
// alone writes (revision, timestamps) are Computed only.

func reqString(desc string) schema.StringAttribute {
	return schema.StringAttribute{Required: true, Description: desc}
}

func reqNumber(desc string) schema.NumberAttribute {
	return schema.NumberAttribute{Required: true, Description: desc}
}

func optString(desc string) schema.StringAttribute {
	return schema.StringAttribute{Optional: true, Computed: true, Description: desc,
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
}

func optNumber(desc string) schema.NumberAttribute {
	return schema.NumberAttribute{Optional: true, Computed: true, Description: desc,
		PlanModifiers: []planmodifier.Number{numberplanmodifier.UseStateForUnknown()}}
}

func optBool(desc string) schema.BoolAttribute {
	return schema.BoolAttribute{Optional: true, Computed: true, Description: desc,
		PlanModifiers: []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()}}
}

// Lists and maps the server leaves empty unless told are Optional only:
// removing one from the configuration empties it.
func optList(elem attr.Type, desc string) schema.ListAttribute {
	return schema.ListAttribute{ElementType: elem, Optional: true, Description: desc}
}

func reqList(elem attr.Type, desc string) schema.ListAttribute {
	return schema.ListAttribute{ElementType: elem, Required: true, Description: desc}
}

func optMap(elem attr.Type, desc string) schema.MapAttribute {
	return schema.MapAttribute{ElementType: elem, Optional: true, Description: desc}
}

func optObject(desc string, attrs map[string]schema.Attribute) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{Attributes: attrs, Optional: true, Computed: true, Description: desc,
		PlanModifiers: []planmodifier.Object{objectplanmodifier.UseStateForUnknown()}}
}

func optObjects(desc string, attrs map[string]schema.Attribute) schema.ListNestedAttribute {
	return schema.ListNestedAttribute{NestedObject: schema.NestedAttributeObject{Attributes: attrs},
		Optional: true, Description: desc}
}

// Inside a list of objects (origins, records) an attribute left out takes
// the API's documented default in the plan itself, not the state's value:
// Terraform pairs list elements by index, so an origin removed from the
// middle would otherwise hand its own settings (enabled = false) to the
// one that moves into its place.
func defString(desc, def string) schema.StringAttribute {
	return schema.StringAttribute{Optional: true, Computed: true, Description: desc, Default: stringdefault.StaticString(def)}
}

func defNumber(desc string, def int64) schema.NumberAttribute {
	return schema.NumberAttribute{Optional: true, Computed: true, Description: desc,
		Default: numberdefault.StaticBigFloat(big.NewFloat(float64(def)))}
}

func defBool(desc string, def bool) schema.BoolAttribute {
	return schema.BoolAttribute{Optional: true, Computed: true, Description: desc, Default: booldefault.StaticBool(def)}
}

var (
	stringList    = types.ListType{ElemType: types.StringType}
	stringListMap = types.MapType{ElemType: stringList}
)

// idAttr is an object's id: chosen on create when set (letters, digits,
// - and _), else assigned by the server; a new id is a new object.
func idAttr() schema.StringAttribute {
	return schema.StringAttribute{Optional: true, Computed: true,
		Description:   "The object's id: chosen on create when set (letters, digits, `-`, `_`), else a random 32-hex-digit id the server assigns. Changing it replaces the object.",
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown(), stringplanmodifier.RequiresReplace()}}
}

// meta are the members the store sets on every object.
func meta(attrs map[string]schema.Attribute) map[string]schema.Attribute {
	attrs["id"] = idAttr()
	attrs["revision"] = schema.NumberAttribute{Computed: true,
		Description: "The revision of the object's last write, its ETag: updates and deletes send it in `If-Match`, so that an apply fails rather than overwrites a change made since the refresh."}
	attrs["created_on"] = schema.StringAttribute{Computed: true, Description: "When the object was created (RFC 3339).",
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
	attrs["modified_on"] = schema.StringAttribute{Computed: true, Description: "When the object was last written (RFC 3339)."}
	return attrs
}

var metaReadOnly = []string{"revision", "created_on", "modified_on"}
