package provider

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
)

// The provider follows the API document member by member, and the API
// grows: TestSchemasFollowOpenAPI walks the document's schemas of every
// managed kind and fails on a member the provider has no attribute for,
// an attribute the document has no member for, or the two disagreeing on
// the shape (string, number, bool, list, map, nested object) or on the
// words a member takes (an enum the description does not name), unless the
// path is in openAPIIgnored with the reason. It reads the document of
// this checkout, as the acceptance tests run its glbd, so that a member
// added to the API fails here before any plan of it is inexact. A kind's
// renamed attributes are compared under their API names.

// openAPISchemas are the component schemas of each kind: the object as
// written and, for kinds whose request differs from their answer (a
// secret shown once), both.
var openAPISchemas = map[string][]string{
	"zone":          {"Zone"},
	"monitor":       {"Monitor"},
	"pool":          {"Pool"},
	"load_balancer": {"LoadBalancer"},
	"network":       {"Network"},
	"tsig_key":      {"TSIGKeyRequest", "NewTSIGKey"},
	"token":         {"TokenRequest", "NewToken"},
	"notification":  {"NotificationRequest", "NewNotification"},
	"shift":         {"Shift"},
	"safety_rules":  {"SafetyRules"},
}

// openAPIIgnored are the paths (kind.member.member, list elements
// unnumbered) the comparison leaves out, each with why.
var openAPIIgnored = map[string]string{
	// The API names TSIG keys, tokens and the global safety rules by a
	// member of theirs (or by nothing): the provider's id repeats it,
	// as Terraform wants every resource to have one.
	"tsig_key.id":     "the key's name, in the path",
	"token.id":        "the token's name, in the path",
	"safety_rules.id": "always global; the API's object has none",
	// A shift's overridden is a list of the harms (rule, load balancer,
	// counts, message) in the API, and a list of each harm's JSON in
	// the provider: read-only, and changing its type needs a state
	// upgrade of every shift already in a state.
	"shift.overridden": "read-only; each harm held as its JSON",
}

// openAPIWordsElsewhere are the attributes whose words the description
// need not list, each with where an operator finds them.
var openAPIWordsElsewhere = map[string]string{
	"pool.check_regions":    "the thirteen region codes: the glb_regions data source",
	"network.region":        "the region codes: the glb_regions data source",
	"tsig_key.grants.types": "record type mnemonics, as DNS spells them",
}

func TestSchemasFollowOpenAPI(t *testing.T) {
	b, err := os.ReadFile("../../../api/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]*apiSchema `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	c := apiComparison{schemas: doc.Components.Schemas, ignored: openAPIIgnored, wordsElsewhere: openAPIWordsElsewhere, seen: map[string]bool{}}
	for _, k := range []kind{zoneKind, monitorKind, poolKind, loadBalancerKind, networkKind, tsigKeyKind,
		tokenKind, notificationKind, shiftKind, safetyRulesKind} {
		names, ok := openAPISchemas[k.name]
		if !ok {
			t.Errorf("glb_%s: no API schema named in openAPISchemas", k.name)
			continue
		}
		var objs []*apiSchema
		for _, n := range names {
			s := doc.Components.Schemas[n]
			if s == nil {
				t.Fatalf("glb_%s: the API document has no schema %s", k.name, n)
			}
			objs = append(objs, s)
		}
		attrs := maps.Clone(k.schema.Attributes)
		for attr, member := range k.renamed {
			attrs[member] = attrs[attr]
			delete(attrs, attr)
		}
		c.object(k.name, objs, attrs)
	}
	for _, p := range c.problems {
		t.Error(p)
	}
	for _, m := range []map[string]string{openAPIIgnored, openAPIWordsElsewhere} {
		for p := range m {
			if !c.seen[p] {
				t.Errorf("%s is left out of the comparison but the comparison never met it: remove it", p)
			}
		}
	}
}

// apiSchema is the part of a JSON Schema (OpenAPI 3.1) the comparison
// reads.
type apiSchema struct {
	Ref                  string                `json:"$ref"`
	Type                 any                   `json:"type"` // "string" or ["number", "null"]
	Properties           map[string]*apiSchema `json:"properties"`
	Items                *apiSchema            `json:"items"`
	AdditionalProperties any                   `json:"additionalProperties"` // false or a schema
	Enum                 []any                 `json:"enum"`
	OneOf                []*apiSchema          `json:"oneOf"`
	AnyOf                []*apiSchema          `json:"anyOf"`
}

type apiComparison struct {
	schemas        map[string]*apiSchema
	ignored        map[string]string
	wordsElsewhere map[string]string
	seen           map[string]bool
	problems       []string
}

// resolve follows $ref and picks the one non-null branch of a oneOf or
// anyOf ({"oneOf": [{"$ref": ...}, {"type": "null"}]}).
func (c *apiComparison) resolve(s *apiSchema) *apiSchema {
	for s != nil {
		switch {
		case s.Ref != "":
			s = c.schemas[strings.TrimPrefix(s.Ref, "#/components/schemas/")]
		case len(s.OneOf)+len(s.AnyOf) > 0:
			var next *apiSchema
			for _, b := range append(slices.Clone(s.OneOf), s.AnyOf...) {
				if r := c.resolve(b); r != nil && r.kind() != "null" {
					next = r
				}
			}
			return next
		default:
			return s
		}
	}
	return nil
}

// kind is the schema's shape: string, number, bool, list, map, object
// (with properties) or null; integer is number, as Terraform has one.
func (s *apiSchema) kind() string {
	var types []string
	switch t := s.Type.(type) {
	case string:
		types = []string{t}
	case []any:
		for _, e := range t {
			if n, ok := e.(string); ok && n != "null" {
				types = append(types, n)
			}
		}
		if len(types) == 0 {
			return "null"
		}
	}
	switch {
	case len(s.Properties) > 0:
		return "object"
	case len(types) != 1:
		return fmt.Sprintf("%v", s.Type)
	}
	switch types[0] {
	case "integer", "number":
		return "number"
	case "boolean":
		return "bool"
	case "array":
		return "list"
	case "object":
		if s.AdditionalProperties != nil && s.AdditionalProperties != false {
			return "map"
		}
		return "object"
	}
	return types[0]
}

// enum checks that the description of an attribute whose member (or
// whose list's elements) takes one of a set of words names every word,
// as `word`: the words are what an operator writes, and a word the API
// gained (a monitor type, an event) is the next drift.
func (c *apiComparison) enum(at string, s *apiSchema, a schema.Attribute) {
	if _, ok := c.wordsElsewhere[at]; ok {
		c.seen[at] = true
		return
	}
	e := s.Enum
	if items := c.resolve(s.Items); items != nil {
		e = items.Enum
	}
	desc := a.GetDescription()
	for _, w := range e {
		if w, ok := w.(string); ok && w != "" && !strings.Contains(desc, "`"+w+"`") {
			c.problems = append(c.problems, fmt.Sprintf("%s: the description does not name `%s`, which the API document allows", at, w))
		}
	}
}

// attrKind is an attribute's shape in the same words.
func attrKind(a schema.Attribute) (string, map[string]schema.Attribute) {
	switch a := a.(type) {
	case schema.StringAttribute:
		return "string", nil
	case schema.NumberAttribute:
		return "number", nil
	case schema.BoolAttribute:
		return "bool", nil
	case schema.ListAttribute:
		return "list", nil
	case schema.MapAttribute:
		return "map", nil
	case schema.SingleNestedAttribute:
		return "object", a.Attributes
	case schema.ListNestedAttribute:
		return "list of objects", a.NestedObject.Attributes
	}
	return fmt.Sprintf("%T", a), nil
}

// object compares the members of objs (the union of their properties)
// with attrs at path at.
func (c *apiComparison) object(at string, objs []*apiSchema, attrs map[string]schema.Attribute) {
	props := map[string]*apiSchema{}
	for _, o := range objs {
		for n, p := range c.resolve(o).Properties {
			props[n] = p
		}
	}
	names := make([]string, 0, len(props)+len(attrs))
	for n := range props {
		names = append(names, n)
	}
	for n := range attrs {
		if _, ok := props[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		p := at + "." + n
		if _, ok := c.ignored[p]; ok {
			c.seen[p] = true
			continue
		}
		prop, inAPI := props[n]
		a, inProvider := attrs[n]
		switch {
		case !inProvider:
			c.problems = append(c.problems, fmt.Sprintf("%s: in the API document, not in the provider's schema (add it, or to openAPIIgnored with the reason)", p))
			continue
		case !inAPI:
			c.problems = append(c.problems, fmt.Sprintf("%s: in the provider's schema, not in the API document", p))
			continue
		}
		c.member(p, c.resolve(prop), a)
	}
}

func (c *apiComparison) member(at string, s *apiSchema, a schema.Attribute) {
	if s == nil {
		c.problems = append(c.problems, fmt.Sprintf("%s: the API document's schema does not resolve", at))
		return
	}
	ak, nested := attrKind(a)
	sk := s.kind()
	if sk == "list" {
		if items := c.resolve(s.Items); items != nil && items.kind() == "object" {
			sk = "list of objects"
		}
	}
	if ak != sk {
		c.problems = append(c.problems, fmt.Sprintf("%s: %s in the API document, %s in the provider's schema", at, sk, ak))
		return
	}
	c.enum(at, s, a)
	switch sk {
	case "object":
		c.object(at, []*apiSchema{s}, nested)
	case "list of objects":
		c.object(at, []*apiSchema{c.resolve(s.Items)}, nested)
	}
}
