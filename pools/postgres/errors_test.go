package postgres

import (
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/glb-dns/glb/pools"
)

func TestMapError(t *testing.T) {
	fieldOf := func(err error) string {
		var ve *pools.ValidationError
		if !errors.As(err, &ve) || len(ve.Errors) != 1 {
			return fmt.Sprintf("not one field: %v", err)
		}
		return ve.Errors[0].Path
	}
	for _, tc := range []struct {
		pe    pgconn.PgError
		field string
	}{
		{pgconn.PgError{Code: "23505", TableName: "zones", ConstraintName: "zones_name_key"}, "name"},
		{pgconn.PgError{Code: "23505", TableName: "networks", ConstraintName: "networks_cidr_key"}, "cidr"},
		{pgconn.PgError{Code: "23505", TableName: "pools", ConstraintName: "pools_pkey"}, "id"},
		{pgconn.PgError{Code: "23514", TableName: "load_balancers", ConstraintName: "load_balancers_ttl_check"}, "ttl"},
		{pgconn.PgError{Code: "23503", TableName: "pools", ConstraintName: "pools_monitor_id_fkey", Message: "insert or update on table"}, "monitor"},
		{pgconn.PgError{Code: "23503", TableName: "load_balancer_pools", ConstraintName: "load_balancer_pools_pool_id_fkey", Message: "insert or update"}, "pools"},
	} {
		if got := fieldOf(mapError(&tc.pe)); got != tc.field {
			t.Errorf("%s on %s: field %q, want %q", tc.pe.Code, tc.pe.ConstraintName, got, tc.field)
		}
	}
	var ce *pools.ConflictError
	err := mapError(&pgconn.PgError{Code: "23503", TableName: "pools", Message: `update or delete on table "pools" violates foreign key constraint`})
	if !errors.As(err, &ce) || ce.Kind != "pool" {
		t.Errorf("delete of a referenced row: %v, want a ConflictError on pool", err)
	}
	for _, down := range []error{
		&pgconn.PgError{Code: "57P01"},
		&pgconn.PgError{Code: "08006"},
		&net.OpError{Op: "dial", Err: errors.New("connection refused")},
	} {
		if err := mapError(down); !errors.Is(err, pools.ErrUnavailable) {
			t.Errorf("%v: %v, want ErrUnavailable", down, err)
		}
	}
	if err := mapError(fmt.Errorf("x: %w", pools.ErrStale)); !errors.Is(err, pools.ErrStale) || errors.Is(err, pools.ErrUnavailable) {
		t.Errorf("domain error changed: %v", err)
	}
}
