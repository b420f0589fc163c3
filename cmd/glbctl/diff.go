package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/glb-dns/glb/pools"
)

// fieldDiff is one field whose value differs.
type fieldDiff struct {
	path     string
	from, to any // nil: absent
}

func (d fieldDiff) String() string {
	return fmt.Sprintf("%s: %s → %s", d.path, showValue(d.from), showValue(d.to))
}

func showValue(v any) string {
	if v == nil {
		return "(none)"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// diffObjects compares a stored object with the file's, field by field,
// ignoring what only the store sets.
func diffObjects(cur, want pools.Object) ([]fieldDiff, error) {
	a, err := comparableDoc(cur)
	if err != nil {
		return nil, err
	}
	b, err := comparableDoc(want)
	if err != nil {
		return nil, err
	}
	var out []fieldDiff
	diffValues("", a, b, &out)
	return out, nil
}

// comparableDoc renders an object as generic JSON in the store's
// canonical form (names, prefixes, [] for null lists), without the fields
// only the store sets.
func comparableDoc(o pools.Object) (map[string]any, error) {
	doc, err := document(o)
	if err != nil {
		return nil, err
	}
	for _, f := range readOnly {
		delete(doc, f)
	}
	delete(doc, "id")
	return doc, nil
}

// readOnly lists the fields the store sets; a file's values for them are
// ignored, as the API ignores them.
var readOnly = []string{"revision", "created_on", "modified_on", "serial"}

// document renders an object in canonical form as generic JSON (numbers
// as json.Number).
func document(o pools.Object) (map[string]any, error) {
	b, err := canonicalJSON(o)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("decode %s: %w", o.Kind().Singular(), err)
	}
	return doc, nil
}

// canonicalJSON encodes a copy of o in the store's canonical form with
// the meta fields only the store sets cleared, its fields in the API's
// order.
func canonicalJSON(o pools.Object) ([]byte, error) {
	c, err := pools.Clone(o)
	if err != nil {
		return nil, fmt.Errorf("copy %s: %w", o.Kind().Singular(), err)
	}
	pools.Canonicalize(c)
	m := c.ObjectMeta()
	m.Revision, m.CreatedOn, m.ModifiedOn = 0, time.Time{}, time.Time{}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", o.Kind().Singular(), err)
	}
	return b, nil
}

// diffValues appends the paths where a and b differ. Objects are compared
// member by member and lists of objects element by element; a list of
// plain values is one value ("default_pools: ["a"] → ["b","a"]").
func diffValues(path string, a, b any, out *[]fieldDiff) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := slices.Sorted(maps.Keys(am))
		for k := range bm {
			if _, ok := am[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			diffValues(joinField(path, k), am[k], bm[k], out)
		}
		return
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok && (hasObjects(al) || hasObjects(bl)) {
		for i := range max(len(al), len(bl)) {
			var x, y any
			if i < len(al) {
				x = al[i]
			}
			if i < len(bl) {
				y = bl[i]
			}
			diffValues(fmt.Sprintf("%s[%d]", path, i), x, y, out)
		}
		return
	}
	if !equalJSON(a, b) {
		*out = append(*out, fieldDiff{path: path, from: a, to: b})
	}
}

func hasObjects(l []any) bool {
	for _, e := range l {
		if _, ok := e.(map[string]any); ok {
			return true
		}
	}
	return false
}

// equalJSON compares two generic JSON values by their encoding, which is
// canonical for both sides (sorted keys; numbers as the store encodes them).
func equalJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

func joinField(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
