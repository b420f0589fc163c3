package migrations

import (
	"cmp"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/tern/v2/migrate"
)

// load appends the migration files to m in the order of their numbers.
// tern's own loader refuses a gap in the numbers; glb's numbers are
// handed out to changes before they land, so 005 may land before 003.
// Each file is therefore written to apply on its own (if not exists), and
// the schema version counts the files applied.
func load(m *migrate.Migrator, fsys fs.FS) error {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return err
	}
	type file struct {
		n    int
		name string
	}
	files := make([]file, 0, len(names))
	for _, name := range names {
		num, _, ok := strings.Cut(name, "_")
		n, err := strconv.Atoi(num)
		if !ok || err != nil {
			return fmt.Errorf("%s: a migration file is named NNN_name.sql", name)
		}
		files = append(files, file{n, name})
	}
	slices.SortFunc(files, func(a, b file) int { return cmp.Compare(a.n, b.n) })
	for i, f := range files {
		if i > 0 && files[i-1].n == f.n {
			return fmt.Errorf("%s and %s share a number", files[i-1].name, f.name)
		}
		body, err := fs.ReadFile(fsys, f.name)
		if err != nil {
			return err
		}
		m.AppendMigration(f.name, string(body), "")
	}
	return nil
}
