package postgres

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/glb-dns/glb/pools"
)

// mapError turns what pgx returns into the errors of pools.Store: the
// domain's errors pass through, constraint violations become the typed
// errors the API maps (the store validates first, so these are the
// backstop), and anything about reaching the server wraps ErrUnavailable.
func mapError(err error) error {
	if pools.IsDomainError(err) {
		return err
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		// Dial and I/O errors, timeouts, a closed pool: the server is not
		// there for us.
		return fmt.Errorf("%w: %w", pools.ErrUnavailable, err)
	}
	switch pe.Code {
	case "23503": // foreign_key_violation
		if strings.Contains(pe.Message, "update or delete") {
			return &pools.ConflictError{Kind: singular(pe.TableName), Referrers: nil}
		}
		return fieldError(pe, "no such object")
	case "23505": // unique_violation
		return fieldError(pe, "already in use")
	case "23514", "23502", "22P02", "22003": // check, not null, bad text, out of range
		return fieldError(pe, "not allowed")
	}
	switch pe.Code[:2] {
	case "08", "53", "57", "58", "3D", "28": // connection, resources, shutdown, system, no database, auth
		return fmt.Errorf("%w: %w", pools.ErrUnavailable, err)
	}
	return fmt.Errorf("postgres: %w", err)
}

func singular(table string) string { return pools.Kind(table).Singular() }

// fieldError names the field a constraint guards: constraints are named
// table_column_kind by PostgreSQL's defaults.
func fieldError(pe *pgconn.PgError, msg string) error {
	field := pe.ColumnName
	if field == "" {
		field = strings.TrimPrefix(pe.ConstraintName, pe.TableName+"_")
		for _, suf := range []string{"_fkey", "_key", "_check", "_pkey"} {
			field = strings.TrimSuffix(field, suf)
		}
	}
	switch field {
	case "pkey", "":
		field = "id"
	case "zone_id":
		field = "zone"
	case "monitor_id":
		field = "monitor"
	}
	if pe.TableName == "origins" {
		field = "origins"
	}
	if pe.TableName == "load_balancer_pools" {
		field = "pools"
	}
	return &pools.ValidationError{Errors: []pools.FieldError{{Path: field, Message: msg + ": " + pe.Message}}}
}
