package api

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestMergePatchRFC7396 runs the examples of RFC 7396 Appendix A.
func TestMergePatchRFC7396(t *testing.T) {
	t.Parallel()
	cases := []struct{ target, patch, want string }{
		{`{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`},
		{`{"a":"b"}`, `{"a":null}`, `{}`},
		{`{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`},
		{`{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`},
		{`{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`, `{"a":{"b":"d"}}`},
		{`{"a":[{"b":"c"}]}`, `{"a":[1]}`, `{"a":[1]}`},
		{`["a","b"]`, `["c","d"]`, `["c","d"]`},
		{`{"a":"b"}`, `["c"]`, `["c"]`},
		{`{"a":"foo"}`, `null`, `null`},
		{`{"a":"foo"}`, `"bar"`, `"bar"`},
		{`{"e":null}`, `{"a":1}`, `{"e":null,"a":1}`},
		{`[1,2]`, `{"a":"b","c":null}`, `{"a":"b"}`},
		{`{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`},
	}
	for _, c := range cases {
		var target, patch, want any
		for _, d := range []struct {
			s string
			v *any
		}{{c.target, &target}, {c.patch, &patch}, {c.want, &want}} {
			if err := json.Unmarshal([]byte(d.s), d.v); err != nil {
				t.Fatal(err)
			}
		}
		patchBefore, _ := json.Marshal(patch)
		got := mergePatch(target, patch)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("merge %s into %s = %v, want %s", c.patch, c.target, got, c.want)
		}
		// PATCH re-applies the same patch after a concurrent write, so
		// applying it must leave it as it was.
		if after, _ := json.Marshal(patch); string(after) != string(patchBefore) {
			t.Errorf("patch %s changed to %s", patchBefore, after)
		}
	}
}
