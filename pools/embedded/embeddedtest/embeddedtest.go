// Package embeddedtest gives a test the real embedded store, as pgtest
// gives it PostgreSQL: a file of its own in the test's temporary
// directory, closed when the test ends.
package embeddedtest

import (
	"path/filepath"
	"testing"

	"github.com/glb-dns/glb/pools/embedded"
)

// Open opens a new embedded store for t and closes it when t ends; a
// store that does not open fails t.
func Open(t testing.TB) *embedded.Store {
	t.Helper()
	s, err := embedded.Open(filepath.Join(t.TempDir(), "glb.db"))
	if err != nil {
		t.Fatalf("open embedded store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
