package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/glb-dns/glb/pools"
)

// applyOrder is the order objects are written in: what others refer to
// first (a load balancer names a zone and pools, a pool a monitor).
// Deletions go in the reverse order.
var applyOrder = []pools.Kind{pools.KindZone, pools.KindMonitor, pools.KindNetwork, pools.KindPool, pools.KindLoadBalancer}

// entry is one object of the file.
type entry struct {
	kind pools.Kind
	id   string
	// path is where the object is in the file: "pools[2]".
	path string
	// doc is the object as written, converted to JSON values; it is what
	// apply sends, so that the API sees exactly the file.
	doc map[string]any
	// obj is doc decoded with the API's defaults.
	obj pools.Object
}

func (e *entry) key() string { return string(e.kind) + "/" + e.id }

// configFile is a parsed configuration file.
type configFile struct {
	name    string
	sum     string // sha256 of the bytes, to tie a saved plan to them
	entries []*entry
	lines   lineIndex
}

// fileError is one problem at one place of the file.
type fileError struct {
	Line    int
	Path    string
	Message string
}

// fileErrors lists every problem of a file, as the API lists every bad
// field of a body.
type fileErrors struct {
	name string
	list []fileError
}

func (e *fileErrors) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d problem(s)", e.name, len(e.list))
	for _, fe := range e.list {
		b.WriteString("\n  ")
		if fe.Line > 0 {
			fmt.Fprintf(&b, "%s:%d: ", e.name, fe.Line)
		}
		fmt.Fprintf(&b, "%s: %s", fe.Path, fe.Message)
	}
	return b.String()
}

func (e *fileErrors) add(lines lineIndex, path, format string, args ...any) {
	e.list = append(e.list, fileError{Line: lines.line(path), Path: path, Message: fmt.Sprintf(format, args...)})
}

func (e *fileErrors) err() error {
	if len(e.list) == 0 {
		return nil
	}
	return e
}

// readInput reads the file name, or standard input for "-".
func readInput(name string, stdin io.Reader) ([]byte, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return data, nil
}

// readConfigFile reads a file ("-" is standard input) and parses it.
func readConfigFile(name string, stdin io.Reader) (*configFile, error) {
	data, err := readInput(name, stdin)
	if err != nil {
		return nil, err
	}
	return parseConfigFile(name, data)
}

// parseConfigFile turns YAML (or JSON) into objects. The YAML is converted
// to JSON and each object is decoded by pools.Decode, the API's own strict
// decoder, so that a file is refused for exactly what a request body would
// be; the paths it reports are mapped back to lines of the file.
func parseConfigFile(name string, data []byte) (*configFile, error) {
	sum := sha256.Sum256(data)
	f := &configFile{name: name, sum: hex.EncodeToString(sum[:]), lines: indexLines(data)}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s is empty; an empty configuration is written {} (and with --prune deletes everything)", name)
	}
	var top any
	if err := decodeYAML(name, data, &top, (*json.Decoder).UseNumber); err != nil {
		return nil, err
	}
	root, ok := top.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: the file must be a mapping with the keys %s", name, kindList())
	}
	errs := &fileErrors{name: name}
	for _, key := range slices.Sorted(maps.Keys(root)) {
		if !slices.Contains(applyOrder, pools.Kind(key)) {
			errs.add(f.lines, key, "unknown field; want one of %s", kindList())
		}
	}
	seen := map[string]string{}
	for _, k := range applyOrder {
		v, ok := root[string(k)]
		if !ok || v == nil {
			continue
		}
		list, ok := v.([]any)
		if !ok {
			errs.add(f.lines, string(k), "must be a list of objects")
			continue
		}
		for i, item := range list {
			if e := decodeEntry(f, k, i, item, errs); e != nil {
				if prev, dup := seen[e.key()]; dup {
					errs.add(f.lines, e.path+".id", "%q is also the id of %s", e.id, prev)
					continue
				}
				seen[e.key()] = e.path
				f.entries = append(f.entries, e)
			}
		}
	}
	if err := errs.err(); err != nil {
		return nil, err
	}
	return f, nil
}

// decodeYAML decodes YAML (JSON is YAML too) into v by way of its JSON
// form, so that a file is read with the json tags and decoder rules of an
// API body; set chooses those rules (UseNumber, DisallowUnknownFields).
func decodeYAML(name string, data []byte, v any, set func(*json.Decoder)) error {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	set(dec)
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// decodeEntry decodes the i-th object of kind k, adding its problems to errs.
func decodeEntry(f *configFile, k pools.Kind, i int, item any, errs *fileErrors) *entry {
	path := fmt.Sprintf("%s[%d]", k, i)
	doc, ok := item.(map[string]any)
	if !ok {
		errs.add(f.lines, path, "must be an object")
		return nil
	}
	id, _ := doc["id"].(string)
	if id == "" {
		errs.add(f.lines, path+".id", "required: every object in a file names its id, so that apply finds it again")
	}
	o, fes, err := pools.Decode(k, doc)
	if err != nil {
		errs.add(f.lines, path, "%v", err)
		return nil
	}
	for _, fe := range fes {
		errs.add(f.lines, within(path, fe.Path), "%s", fe.Message)
	}
	if len(fes) > 0 || id == "" {
		return nil
	}
	return &entry{kind: k, id: id, path: path, doc: doc, obj: o}
}

// within joins an object's place in the file and a path the API reported
// inside the object.
func within(objPath, fieldPath string) string {
	if fieldPath == "" || fieldPath == "(body)" {
		return objPath
	}
	return objPath + "." + fieldPath
}

func kindList() string {
	s := make([]string, len(applyOrder))
	for i, k := range applyOrder {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}
