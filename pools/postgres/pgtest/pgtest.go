// Package pgtest gives tests a real PostgreSQL: a database of their own,
// cloned from a template migrated by glb's migrations (pgtestdb), and a
// store over it. The server is DATABASE_URL, else the local default, else
// a throwaway cluster of the test binary's own; a test fails, never skips,
// when there is none.
package pgtest

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
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

// DefaultURL is the server tried when DATABASE_URL is not set.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

var (
	serverOnce sync.Once
	serverURL  string
	serverErr  error
)

// ServerURL returns the URL of the server tests use, found once per test
// binary: DATABASE_URL when set (it must answer); else DefaultURL when a
// local server accepts it; else a throwaway cluster started from the
// installed server binaries, removed when the test binary exits.
func ServerURL(t testing.TB) string {
	t.Helper()
	serverOnce.Do(func() { serverURL, serverErr = findServer() })
	if serverErr != nil {
		t.Fatalf("these tests need PostgreSQL (15 or later): %v", serverErr)
	}
	return serverURL
}

func findServer() (string, error) {
	if url := os.Getenv("DATABASE_URL"); url != "" {
		if err := ping(url); err != nil {
			return "", fmt.Errorf("DATABASE_URL %s does not answer: %w\n"+
				"Point it at a server where the user may create databases and roles, or unset it to let the tests start their own", url, err)
		}
		return url, nil
	}
	defaultErr := ping(DefaultURL)
	if defaultErr == nil {
		return DefaultURL, nil
	}
	c, err := startCluster()
	if err != nil {
		return "", fmt.Errorf("DATABASE_URL is unset, %s does not accept the connection (%v), and a throwaway cluster could not be started: %w",
			DefaultURL, defaultErr, err)
	}
	return c.url, nil
}

func ping(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return pingCtx(ctx, url)
}

func pingCtx(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.Ping(ctx)
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
