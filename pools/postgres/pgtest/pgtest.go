// Package pgtest gives tests a real PostgreSQL: a database of their own,
// cloned from a template migrated by glb's migrations (pgtestdb), and a
// store over it. The server is DATABASE_URL, else the local default; a
// test fails, never skips, when neither answers.
package pgtest

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx" that pgtestdb opens
	"github.com/peterldowns/pgtestdb"

	"github.com/glb-dns/glb/migrations"
	"github.com/glb-dns/glb/pools/postgres"
)

// DefaultURL is the server used when DATABASE_URL is not set.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

var (
	checkOnce sync.Once
	checkErr  error
)

// ServerURL returns the URL of the server tests use (DATABASE_URL, else
// DefaultURL) after checking once that it answers.
func ServerURL(t testing.TB) string {
	t.Helper()
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		url = DefaultURL
	}
	checkOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			checkErr = err
			return
		}
		checkErr = conn.Ping(ctx)
		conn.Close(ctx)
	})
	if checkErr != nil {
		t.Fatalf("these tests need PostgreSQL (15 or later) and %s does not answer: %v\n"+
			"Start one, or point DATABASE_URL at a server where the user may create databases and roles, e.g.\n"+
			"  DATABASE_URL='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable' go test ./...", url, checkErr)
	}
	return url
}

func config(t testing.TB) pgtestdb.Config {
	t.Helper()
	url := ServerURL(t)
	pc, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatalf("DATABASE_URL %q: %v", url, err)
	}
	return pgtestdb.Config{
		DriverName: "pgx",
		Host:       pc.Host,
		Port:       strconv.Itoa(int(pc.Port)),
		User:       pc.User,
		Password:   pc.Password,
		Database:   pc.Database,
		Options:    "sslmode=disable",
	}
}

// migrator builds pgtestdb's template with migrations.Up; the template is
// rebuilt whenever the migration files change.
type migrator struct{}

func (migrator) Hash() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(migrations.FS, path)
		if err != nil {
			return err
		}
		h.Write([]byte(path))
		h.Write(b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil)), err
}

func (migrator) Migrate(ctx context.Context, _ *sql.DB, conf pgtestdb.Config) error {
	return migrations.UpURL(ctx, conf.URL())
}

// URL returns the URL of a new migrated database for this test alone. It
// is dropped when the test passes and kept (its URL logged) when it fails.
func URL(t testing.TB) string {
	t.Helper()
	return pgtestdb.Custom(t, config(t), migrator{}).URL()
}

// EmptyURL returns the URL of a new database without glb's schema.
func EmptyURL(t testing.TB) string {
	t.Helper()
	return pgtestdb.Custom(t, config(t), pgtestdb.NoopMigrator{}).URL()
}

// NewStore opens a store on a new migrated database (see URL), closed when
// the test ends, and returns it with the database's URL.
func NewStore(t testing.TB) (*postgres.Store, string) {
	t.Helper()
	url := URL(t)
	s, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatalf("open postgres store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, url
}
