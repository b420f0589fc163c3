package main

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// lineIndex maps a path in the API's notation ("pools[2].origins[1].weight")
// to the line of the file where it is written, so that an error found in
// the JSON the file converts to can point back at the file.
type lineIndex map[string]int

// indexLines parses the file's syntax tree (YAML, which JSON is a subset
// of) and records the line of every mapping key and sequence element.
func indexLines(data []byte) lineIndex {
	idx := lineIndex{}
	f, err := parser.ParseBytes(data, 0)
	if err != nil || len(f.Docs) == 0 {
		return idx // the converter reports syntax errors with their own lines
	}
	idx.walk(f.Docs[0].Body, "")
	return idx
}

func (idx lineIndex) walk(n ast.Node, path string) {
	switch v := n.(type) {
	case nil:
	case *ast.MappingNode:
		for _, mv := range v.Values {
			idx.walk(mv, path)
		}
	case *ast.MappingValueNode:
		key := keyString(v.Key)
		p := key
		if path != "" {
			p = path + "." + key
		}
		if tk := v.Key.GetToken(); tk != nil {
			idx.set(p, tk.Position.Line)
		}
		idx.walk(v.Value, p)
	case *ast.SequenceNode:
		for i, e := range v.Values {
			p := fmt.Sprintf("%s[%d]", path, i)
			if e != nil && e.GetToken() != nil {
				idx.set(p, e.GetToken().Position.Line)
			}
			idx.walk(e, p)
		}
	case *ast.AnchorNode:
		idx.walk(v.Value, path)
	case *ast.TagNode:
		idx.walk(v.Value, path)
	}
}

// set keeps the first line seen for a path: a mapping's own token may come
// after its first key's.
func (idx lineIndex) set(path string, line int) {
	if _, ok := idx[path]; !ok && line > 0 {
		idx[path] = line
	}
}

func keyString(k ast.MapKeyNode) string {
	switch v := k.(type) {
	case *ast.StringNode:
		return v.Value
	}
	if tk := k.GetToken(); tk != nil {
		return tk.Value
	}
	return k.String()
}

// line returns the line of path, or of its nearest ancestor the index
// knows (a key that came from a merge or an alias has no line of its own);
// 0 when none is known.
func (idx lineIndex) line(path string) int {
	for path != "" {
		if l, ok := idx[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			return 0
		}
		path = path[:i]
	}
	return 0
}
