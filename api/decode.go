package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/glb-dns/glb/pools"
)

// MaxBodyBytes bounds a request body: the largest legitimate object (a
// pool of 64 origins, a zone with its records) is far smaller.
const MaxBodyBytes = 1 << 20

// readJSON reads the body (at most MaxBodyBytes) and parses it into a
// generic value, rejecting syntax errors, trailing data and non-objects.
// Numbers stay json.Number so that re-encoding loses no precision.
func readJSON(w http.ResponseWriter, r *http.Request, mergePatch bool) (map[string]any, error) {
	if err := checkContentType(r, mergePatch); err != nil {
		return nil, err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, err
		}
		return nil, badRequest("reading the request body: " + err.Error())
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, badRequest("the request body is empty; send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, syntaxProblem(int64(len(body)), "unexpected end of JSON input")
		}
		return nil, err
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, syntaxProblem(end, "data after the JSON object")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, badRequest("the request body must be a JSON object")
	}
	return obj, nil
}

func syntaxProblem(offset int64, msg string) *Problem {
	return &Problem{
		Type: problemInvalidJSON, Title: "Malformed JSON", Status: http.StatusBadRequest,
		Detail: fmt.Sprintf("at byte offset %d: %s", offset, msg), Offset: &offset,
	}
}

// checkContentType accepts JSON media types (and, for PATCH, RFC 7396's
// application/merge-patch+json). A missing Content-Type is taken as JSON;
// a form body (what curl -d sends without -H) is refused, since it is
// almost always a forgotten header rather than an intent.
func checkContentType(r *http.Request, mergePatch bool) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && (mt == "application/json" || mergePatch && mt == "application/merge-patch+json") {
		return nil
	}
	want := "application/json"
	if mergePatch {
		want = "application/merge-patch+json or application/json"
	}
	return newProblem(http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type %q; want %s", ct, want))
}

// decodeObject turns a parsed JSON object into a fresh object of kind k
// with its defaults. It first walks the document against the Go type so
// that every unknown field and every wrongly typed value is reported with
// its full path (encoding/json would stop at the first, without a path);
// then it decodes strictly, which applies the defaults.
func decodeObject(k pools.Kind, doc map[string]any) (pools.Object, error) {
	o := pools.New(k)
	var fes []pools.FieldError
	checkShape(doc, reflect.TypeOf(o), "", &fes)
	if len(fes) > 0 {
		return nil, badRequest(fmt.Sprintf("%d field(s) at fault; nothing was stored", len(fes)), fes...)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("re-encode request: %w", err)
	}
	if err := json.Unmarshal(b, o); err != nil {
		// The walk should have caught it; report it rather than 500.
		return nil, badRequest(err.Error())
	}
	return o, nil
}

var timeType = reflect.TypeFor[time.Time]()

// checkShape compares a generic JSON value (decoded with UseNumber) with
// the Go type it will be decoded into, appending a FieldError for every
// unknown field and every value of the wrong JSON type. Paths follow
// pools.FieldError: "origins[2].weight", "region_pools.WEU[0]".
func checkShape(v any, t reflect.Type, path string, fes *[]pools.FieldError) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil {
		return // null leaves the default in place
	}
	bad := func(msg string) {
		*fes = append(*fes, pools.FieldError{Path: pathOrRoot(path), Message: msg})
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
				*fes = append(*fes, pools.FieldError{Path: joinPath(path, key), Message: "unknown field"})
				continue
			}
			checkShape(m[key], ft, joinPath(path, key), fes)
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			bad("must be an object")
			return
		}
		for _, key := range slices.Sorted(maps.Keys(m)) {
			checkShape(m[key], t.Elem(), joinPath(path, key), fes)
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

func joinPath(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

func pathOrRoot(p string) string {
	if p == "" {
		return "(body)"
	}
	return p
}
