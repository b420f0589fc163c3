package pools

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Decode turns a generic JSON object (decoded with UseNumber) into a fresh
// object of kind k with its defaults. It first walks the document against
// the Go type so that every unknown field and every wrongly typed value is
// reported with its full path (encoding/json would stop at the first,
// without a path); then it decodes strictly, which applies the defaults.
// The API and glbctl both decode with it, so a file is exactly as strict
// as a request body. err is only for a document that cannot be re-encoded.
func Decode(k Kind, doc map[string]any) (Object, []FieldError, error) {
	o := New(k)
	if o == nil {
		return nil, nil, fmt.Errorf("unknown kind %q", k)
	}
	fes, err := DecodeInto(doc, o)
	if err != nil || len(fes) > 0 {
		return nil, fes, err
	}
	return o, nil, nil
}

// DecodeInto decodes doc into v (a pointer to any JSON-tagged type) as
// strictly as Decode: every unknown or mistyped field is reported.
func DecodeInto(doc map[string]any, v any) ([]FieldError, error) {
	var fes []FieldError
	checkShape(doc, reflect.TypeOf(v), "", &fes)
	if len(fes) > 0 {
		return fes, nil
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("re-encode %T: %w", v, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		// The walk should have caught it; report it as the document's fault.
		return []FieldError{{Path: pathOrRoot(""), Message: err.Error()}}, nil
	}
	return nil, nil
}

var timeType = reflect.TypeFor[time.Time]()

// checkShape compares a generic JSON value (decoded with UseNumber) with
// the Go type it will be decoded into, appending a FieldError for every
// unknown field and every value of the wrong JSON type. Paths follow
// FieldError: "origins[2].weight", "region_pools.WEU[0]".
func checkShape(v any, t reflect.Type, path string, fes *[]FieldError) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil {
		return // null leaves the default in place
	}
	bad := func(msg string) {
		*fes = append(*fes, FieldError{Path: pathOrRoot(path), Message: msg})
	}
	if t == timeType {
		if _, ok := v.(string); !ok {
			bad("must be an RFC 3339 time string")
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			bad("must be an object")
			return
		}
		fields := jsonFields(t)
		for _, key := range slices.Sorted(maps.Keys(m)) {
			ft, ok := fields[key]
			if !ok {
				*fes = append(*fes, FieldError{Path: join(path, key), Message: "unknown field"})
				continue
			}
			checkShape(m[key], ft, join(path, key), fes)
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			bad("must be an object")
			return
		}
		for _, key := range slices.Sorted(maps.Keys(m)) {
			checkShape(m[key], t.Elem(), join(path, key), fes)
		}
	case reflect.Slice, reflect.Array:
		a, ok := v.([]any)
		if !ok {
			bad("must be an array")
			return
		}
		for i, e := range a {
			checkShape(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i), fes)
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			bad("must be a string")
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			bad("must be true or false")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := v.(json.Number)
		if !ok {
			bad("must be an integer")
			return
		}
		// Decoding into a zero value of the field's type checks both
		// integrality and range with encoding/json's own rules.
		if err := json.Unmarshal([]byte(n), reflect.New(t).Interface()); err != nil {
			bad(fmt.Sprintf("must be an integer that fits %s", intRange(t)))
		}
	case reflect.Float32, reflect.Float64:
		if _, ok := v.(json.Number); !ok {
			bad("must be a number")
		}
	case reflect.Interface:
		// Any JSON value fits.
	default:
		bad("cannot be set through the API")
	}
}

func intRange(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("[0, %d]", uint64(1)<<(t.Bits())-1)
	}
	return fmt.Sprintf("[%d, %d]", -(int64(1) << (t.Bits() - 1)), int64(1)<<(t.Bits()-1)-1)
}

// jsonFields maps a struct's JSON names to field types, flattening
// embedded structs (Meta) as encoding/json does.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func pathOrRoot(p string) string {
	if p == "" {
		return "(body)"
	}
	return p
}
