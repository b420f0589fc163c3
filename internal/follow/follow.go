// Package follow finds, in the previous version of a list, the element
// that an element of the new version replaces. Configurations keep their
// order from one revision to the next, so the element at the same
// position is tried first, and an index by key is built only once the
// two lists have parted (an element added, deleted or moved): a small
// change to a large list then costs no map.
package follow

// Finder looks elements of a new list up in prev by key.
type Finder[T any, K comparable] struct {
	prev  []T
	key   func(T) K
	index map[K]int
}

// New returns a Finder over prev.
func New[T any, K comparable](prev []T, key func(T) K) *Finder[T, K] {
	return &Finder[T, K]{prev: prev, key: key}
}

// Find returns the position in prev of the element with key k, which
// sits at position i of the new list, or -1 when prev has none.
func (f *Finder[T, K]) Find(i int, k K) int {
	if f.index == nil {
		if i < len(f.prev) && f.key(f.prev[i]) == k {
			return i
		}
		f.index = make(map[K]int, len(f.prev))
		for j, p := range f.prev {
			f.index[f.key(p)] = j
		}
	}
	if j, ok := f.index[k]; ok {
		return j
	}
	return -1
}
