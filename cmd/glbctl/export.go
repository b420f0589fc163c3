package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/goccy/go-yaml"

	"github.com/glb-dns/glb/pools"
)

func runExport(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	c, fs := newCommand("export", env, stderr, "yaml", "json")
	_, cl, err := commandArgs(fs, args, c, 0, 0, "export takes no arguments")
	if err != nil {
		return usageError(stderr, err)
	}
	st, err := readState(ctx, cl)
	if err != nil {
		return fail(stderr, exitFailed, err)
	}
	out, err := exportState(st, c.output)
	if err != nil {
		return fail(stderr, exitFailed, err)
	}
	_, _ = stdout.Write(out)
	return exitOK
}

// exportState renders the whole configuration as a file apply takes:
// kinds in applyOrder, objects by id, fields in the API's order, and only
// the fields that differ from their defaults, so that the output is stable
// and export → apply → export gives the same bytes.
func exportState(st state, format string) ([]byte, error) {
	var top yaml.MapSlice
	for _, k := range applyOrder {
		objs := make([]pools.Object, 0, len(st[k]))
		for _, o := range st[k] {
			objs = append(objs, o)
		}
		slices.SortFunc(objs, func(a, b pools.Object) int { return cmp.Compare(a.ObjectMeta().ID, b.ObjectMeta().ID) })
		items := make([]any, 0, len(objs))
		for _, o := range objs {
			m, err := exportObject(o)
			if err != nil {
				return nil, err
			}
			items = append(items, m)
		}
		top = append(top, yaml.MapItem{Key: string(k), Value: items})
	}
	if format == "json" {
		b, err := yaml.MarshalWithOptions(top, yaml.JSON())
		if err != nil {
			return nil, fmt.Errorf("encode: %w", err)
		}
		var buf bytes.Buffer
		if err := json.Indent(&buf, b, "", "  "); err != nil {
			return nil, fmt.Errorf("encode: %w", err)
		}
		buf.WriteByte('\n')
		return buf.Bytes(), nil
	}
	b, err := yaml.MarshalWithOptions(top, yaml.IndentSequence(true))
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return b, nil
}

// exportObject renders one object without its read-only fields and its
// defaults.
func exportObject(o pools.Object) (yaml.MapSlice, error) {
	doc, err := document(o)
	if err != nil {
		return nil, err
	}
	m, err := ordered(o)
	if err != nil {
		return nil, err
	}
	def, err := defaults(o.Kind(), doc)
	if err != nil {
		return nil, err
	}
	return stripDefaults(m, def, true), nil
}

// ordered renders an object as an ordered map in its fields' order.
func ordered(o pools.Object) (yaml.MapSlice, error) {
	b, err := canonicalJSON(o)
	if err != nil {
		return nil, err
	}
	var m yaml.MapSlice
	if err := yaml.UnmarshalWithOptions(b, &m, yaml.UseOrderedMap()); err != nil {
		return nil, fmt.Errorf("decode %s: %w", o.Kind().Singular(), err)
	}
	return m, nil
}

// defaults returns what the API fills in for an object of kind k sent
// empty, with, for each list of objects in doc, the default of one
// element ("{}" decoded), so that origins lose their default weight too.
func defaults(k pools.Kind, doc map[string]any) (yaml.MapSlice, error) {
	probe := map[string]any{}
	for key, v := range doc {
		if l, ok := v.([]any); ok && hasObjects(l) {
			probe[key] = []any{map[string]any{}}
		}
	}
	o, fes, err := pools.Decode(k, probe)
	if err != nil {
		return nil, err
	}
	if len(fes) > 0 {
		return nil, fmt.Errorf("defaults of %s: %s: %s", k.Singular(), fes[0].Path, fes[0].Message)
	}
	return ordered(o)
}

// stripDefaults drops the members of m equal to their default in def and
// the empty ones (null, "", [], {}) whose default is empty too; top drops
// the read-only fields as well.
func stripDefaults(m, def yaml.MapSlice, top bool) yaml.MapSlice {
	var out yaml.MapSlice
	for _, it := range m {
		key, _ := it.Key.(string)
		if top && slices.Contains(readOnly, key) {
			continue
		}
		d, hasDefault := lookup(def, key)
		// A list of objects has the probe's one element as its default: it
		// is the default of each element, not of the list.
		elem, isList := elementDefault(d)
		if isEmpty(it.Value) && (!hasDefault || isList || isEmpty(d)) ||
			hasDefault && !isList && sameYAML(it.Value, d) {
			continue
		}
		switch v := it.Value.(type) {
		case yaml.MapSlice:
			if dm, ok := d.(yaml.MapSlice); ok {
				it.Value = stripDefaults(v, dm, false)
			}
		case []any:
			if isList {
				l := make([]any, len(v))
				for i, e := range v {
					if em, ok := e.(yaml.MapSlice); ok {
						l[i] = stripDefaults(em, elem, false)
					} else {
						l[i] = e
					}
				}
				it.Value = l
			}
		}
		out = append(out, it)
	}
	return out
}

func elementDefault(d any) (yaml.MapSlice, bool) {
	if l, ok := d.([]any); ok && len(l) == 1 {
		e, ok := l[0].(yaml.MapSlice)
		return e, ok
	}
	return nil, false
}

func lookup(m yaml.MapSlice, key string) (any, bool) {
	for _, it := range m {
		if it.Key == key {
			return it.Value, true
		}
	}
	return nil, false
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case yaml.MapSlice:
		return len(x) == 0
	}
	return false
}

func sameYAML(a, b any) bool {
	x, err1 := yaml.MarshalWithOptions(a, yaml.JSON())
	y, err2 := yaml.MarshalWithOptions(b, yaml.JSON())
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
