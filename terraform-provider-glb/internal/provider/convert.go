package provider

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The resources are generic over glb's objects: a plan becomes the JSON
// body as the API documents it, and an answer becomes state, by walking
// the values against the schema's own types. Attribute names are the
// API's member names, so that nothing is renamed between the two and an
// attribute added to a schema needs no code.

// toJSON is v as a JSON value, and false when v is null or unknown: a
// member Terraform does not know yet is left out, so that the server
// fills its default.
func toJSON(v tftypes.Value) (any, bool, error) {
	if !v.IsKnown() || v.IsNull() {
		return nil, false, nil
	}
	t := v.Type()
	switch {
	case t.Is(tftypes.String):
		var s string
		err := v.As(&s)
		return s, true, err
	case t.Is(tftypes.Bool):
		var b bool
		err := v.As(&b)
		return b, true, err
	case t.Is(tftypes.Number):
		var f big.Float
		if err := v.As(&f); err != nil {
			return nil, false, err
		}
		return numberJSON(&f), true, nil
	case t.Is(tftypes.List{}), t.Is(tftypes.Set{}), t.Is(tftypes.Tuple{}):
		var elems []tftypes.Value
		if err := v.As(&elems); err != nil {
			return nil, false, err
		}
		out := make([]any, 0, len(elems))
		for _, e := range elems {
			j, ok, err := toJSON(e)
			if err != nil {
				return nil, false, err
			}
			if ok {
				out = append(out, j)
			}
		}
		return out, true, nil
	case t.Is(tftypes.Map{}), t.Is(tftypes.Object{}):
		var members map[string]tftypes.Value
		if err := v.As(&members); err != nil {
			return nil, false, err
		}
		out := make(map[string]any, len(members))
		for k, m := range members {
			j, ok, err := toJSON(m)
			if err != nil {
				return nil, false, err
			}
			if ok {
				out[k] = j
			}
		}
		return out, true, nil
	}
	return nil, false, fmt.Errorf("type %s has no JSON form", t)
}

// numberJSON writes an integer as one and any other number as the
// shortest decimal that reads back as the same float64, which is what
// the server stores: 0.3 written as 0.3, not as 512 bits of it.
func numberJSON(f *big.Float) json.Number {
	if f.IsInt() {
		return json.Number(f.Text('f', 0))
	}
	x, _ := f.Float64()
	return json.Number(strconv.FormatFloat(x, 'g', -1, 64))
}

// parseNumber reads a number as Terraform reads one written in a
// configuration (512 bits, to nearest even), so that the server's 0.3 and
// the configuration's 0.3 are the same value and never a diff.
func parseNumber(s string) (*big.Float, error) {
	f, _, err := big.ParseFloat(s, 10, 512, big.ToNearestEven)
	return f, err
}

// fromJSON is the JSON value j as a value of type t. prior is what
// Terraform held at the same place (the plan on a write, the state on a
// read; null when there is none); where prior says the same as j in
// another spelling it is kept: an empty list for a null one and the
// reverse, a number equal as the float64 the server stores. A member the
// answer lacks is null.
func fromJSON(t tftypes.Type, j any, prior tftypes.Value) (tftypes.Value, error) {
	return reader{}.read(t, j, prior, "")
}

// reader reads answers for one schema: zeros are the paths (attribute
// names joined by dots, list elements unnumbered) of the attributes whose
// default the schema states, which an answer without them holds at their
// zero value (the API leaves out an origin's owner "", a record's ttl 0),
// also where Terraform holds nothing yet (an import).
type reader struct{ zeros map[string]bool }

func (r reader) read(t tftypes.Type, j any, prior tftypes.Value, at string) (tftypes.Value, error) {
	if prior.Type() == nil || !prior.Type().Equal(t) {
		prior = tftypes.NewValue(t, nil)
	}
	if j == nil {
		// The API leaves out members at their zero value (omitempty): a
		// record's ttl 0, an origin's owner "". Absent is that zero.
		if prior.IsKnown() && !prior.IsNull() && (emptyCollection(prior) || zeroScalar(prior)) {
			return prior, nil
		}
		if r.zeros[at] {
			switch {
			case t.Is(tftypes.String):
				return tftypes.NewValue(t, ""), nil
			case t.Is(tftypes.Bool):
				return tftypes.NewValue(t, false), nil
			case t.Is(tftypes.Number):
				return tftypes.NewValue(t, new(big.Float)), nil
			}
		}
		return tftypes.NewValue(t, nil), nil
	}
	switch {
	case t.Is(tftypes.String):
		switch s := j.(type) {
		case string:
			return tftypes.NewValue(t, s), nil
		case json.Number:
			return tftypes.NewValue(t, string(s)), nil
		default:
			b, _ := json.Marshal(j)
			return tftypes.NewValue(t, string(b)), nil
		}
	case t.Is(tftypes.Bool):
		b, ok := j.(bool)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("want a boolean, the answer has %v", j)
		}
		return tftypes.NewValue(t, b), nil
	case t.Is(tftypes.Number):
		n, ok := j.(json.Number)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("want a number, the answer has %v", j)
		}
		f, err := parseNumber(string(n))
		if err != nil {
			return tftypes.Value{}, err
		}
		if prior.IsKnown() && !prior.IsNull() {
			var p big.Float
			if prior.As(&p) == nil {
				a, _ := p.Float64()
				b, _ := f.Float64()
				if a == b {
					return prior, nil
				}
			}
		}
		return tftypes.NewValue(t, f), nil
	case t.Is(tftypes.List{}), t.Is(tftypes.Set{}):
		arr, ok := j.([]any)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("want a list, the answer has %v", j)
		}
		var et tftypes.Type
		if l, ok := t.(tftypes.List); ok {
			et = l.ElementType
		} else {
			et = t.(tftypes.Set).ElementType
		}
		var priors []tftypes.Value
		if prior.IsKnown() && !prior.IsNull() {
			_ = prior.As(&priors)
		}
		if len(arr) == 0 && prior.IsKnown() && prior.IsNull() {
			// Empty where the configuration wrote nothing: the same.
			return prior, nil
		}
		elems := make([]tftypes.Value, len(arr))
		for i, e := range arr {
			var p tftypes.Value
			if i < len(priors) {
				p = priors[i]
			}
			v, err := r.read(et, e, p, at)
			if err != nil {
				return tftypes.Value{}, fmt.Errorf("[%d]: %w", i, err)
			}
			elems[i] = v
		}
		return tftypes.NewValue(t, elems), nil
	case t.Is(tftypes.Map{}):
		obj, ok := j.(map[string]any)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("want an object, the answer has %v", j)
		}
		et := t.(tftypes.Map).ElementType
		var priors map[string]tftypes.Value
		if prior.IsKnown() && !prior.IsNull() {
			_ = prior.As(&priors)
		}
		if len(obj) == 0 && prior.IsKnown() && prior.IsNull() {
			return prior, nil
		}
		members := make(map[string]tftypes.Value, len(obj))
		for k, e := range obj {
			v, err := r.read(et, e, priors[k], at+".*")
			if err != nil {
				return tftypes.Value{}, fmt.Errorf("[%q]: %w", k, err)
			}
			members[k] = v
		}
		return tftypes.NewValue(t, members), nil
	case t.Is(tftypes.Object{}):
		obj, ok := j.(map[string]any)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("want an object, the answer has %v", j)
		}
		ot := t.(tftypes.Object)
		var priors map[string]tftypes.Value
		if prior.IsKnown() && !prior.IsNull() {
			_ = prior.As(&priors)
		}
		members := make(map[string]tftypes.Value, len(ot.AttributeTypes))
		for k, ft := range ot.AttributeTypes {
			v, err := r.read(ft, obj[k], priors[k], join(at, k))
			if err != nil {
				return tftypes.Value{}, fmt.Errorf("%s: %w", k, err)
			}
			members[k] = v
		}
		return tftypes.NewValue(t, members), nil
	}
	return tftypes.Value{}, fmt.Errorf("type %s has no JSON form", t)
}

func emptyCollection(v tftypes.Value) bool {
	t := v.Type()
	switch {
	case t.Is(tftypes.List{}), t.Is(tftypes.Set{}), t.Is(tftypes.Tuple{}):
		var elems []tftypes.Value
		return v.As(&elems) == nil && len(elems) == 0
	case t.Is(tftypes.Map{}):
		var m map[string]tftypes.Value
		return v.As(&m) == nil && len(m) == 0
	}
	return false
}

func zeroScalar(v tftypes.Value) bool {
	t := v.Type()
	switch {
	case t.Is(tftypes.String):
		var s string
		return v.As(&s) == nil && s == ""
	case t.Is(tftypes.Bool):
		var b bool
		return v.As(&b) == nil && !b
	case t.Is(tftypes.Number):
		var f big.Float
		return v.As(&f) == nil && f.Sign() == 0
	}
	return false
}

func join(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}
