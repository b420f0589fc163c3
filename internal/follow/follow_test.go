package follow

import (
	"slices"
	"testing"
)

// TestFind: every element is found wherever it went, a new one is not,
// and while the lists agree no index is built.
func TestFind(t *testing.T) {
	id := func(s string) string { return s }
	prev := []string{"a", "b", "c", "d"}
	f := New(prev, id)
	for i, k := range []string{"a", "b"} {
		if got := f.Find(i, k); got != i {
			t.Errorf("Find(%d, %s) = %d, want %d", i, k, got, i)
		}
	}
	if f.index != nil {
		t.Error("an index was built while the lists agreed")
	}
	next := []string{"a", "b", "x", "d", "c"}
	f = New(prev, id)
	for i, k := range next {
		want := slices.Index(prev, k)
		if got := f.Find(i, k); got != want {
			t.Errorf("Find(%d, %s) = %d, want %d", i, k, got, want)
		}
	}
	if got := New([]string(nil), id).Find(0, "a"); got != -1 {
		t.Errorf("Find in an empty list = %d, want -1", got)
	}
}
