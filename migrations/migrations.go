// Package migrations holds glb's PostgreSQL schema and applies it.
package migrations

import (
	"context"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/tern/v2/migrate"
)

//go:embed *.sql
var files embed.FS

// FS is the migration files, for tests that hash them (a template database
// is rebuilt when they change).
var FS = files

// VersionTable records how far the schema has been migrated.
const VersionTable = "public.glb_schema_version"

// lockKey is glb's advisory lock: any stable number that other
// applications sharing the database are unlikely to use.
const lockKey int64 = 0x676c62_6d6967 // "glbmig"

// Up migrates the database behind conn to the latest schema. Several nodes
// may start at once: they queue on a session advisory lock, and the ones
// that follow the first find nothing left to do. conn is a single
// connection (not a pool) because the lock belongs to the session that
// applies the migrations.
func Up(ctx context.Context, conn *pgx.Conn) (err error) {
	if _, err := conn.Exec(ctx, "select pg_advisory_lock($1)", lockKey); err != nil {
		return fmt.Errorf("migrations: lock: %w", err)
	}
	defer func() {
		if _, uerr := conn.Exec(context.WithoutCancel(ctx), "select pg_advisory_unlock($1)", lockKey); uerr != nil && err == nil {
			err = fmt.Errorf("migrations: unlock: %w", uerr)
		}
	}()
	m, err := migrate.NewMigrator(ctx, conn, VersionTable)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if err := load(m, files); err != nil {
		return fmt.Errorf("migrations: load: %w", err)
	}
	if err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("migrations: apply: %w", err)
	}
	return nil
}

// UpURL connects to the database at url, migrates it with Up and
// disconnects.
func UpURL(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("migrations: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return Up(ctx, conn)
}

// Version is the schema version conn's database is at (0 before Up).
func Version(ctx context.Context, conn *pgx.Conn) (int32, error) {
	var v int32
	err := conn.QueryRow(ctx, "select version from "+VersionTable).Scan(&v)
	return v, err
}
