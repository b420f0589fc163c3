package migrations_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/glb-dns/glb/migrations"
	"github.com/glb-dns/glb/pools/postgres/pgtest"
)

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func TestUpConcurrentNodes(t *testing.T) {
	t.Parallel()
	url := pgtest.EmptyURL(t)
	files, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no migration files embedded: %v", err)
	}
	const nodes = 4
	conns := make([]*pgx.Conn, nodes)
	for i := range conns {
		conns[i] = connect(t, url)
	}
	var wg sync.WaitGroup
	errs := make([]error, nodes)
	for i, c := range conns {
		wg.Go(func() { errs[i] = migrations.Up(t.Context(), c) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("node %d: %v", i, err)
		}
	}
	v, err := migrations.Version(t.Context(), conns[0])
	if err != nil || int(v) != len(files) {
		t.Errorf("schema version %d (%v), want %d", v, err, len(files))
	}
	// Again, as a restarted node would: nothing to do.
	if err := migrations.Up(t.Context(), conns[0]); err != nil {
		t.Errorf("second Up: %v", err)
	}
}

// The constraints hold on their own, for anything that writes to the
// database without going through the store's validation.
func TestConstraints(t *testing.T) {
	t.Parallel()
	conn := connect(t, pgtest.URL(t))
	ctx := t.Context()
	setup := []string{
		`insert into zones values ('z1', 'glb.example.com', 300, 1, 1, now(), now(), '{}')`,
		`insert into monitors values ('m1', 'http', 0, 5, 60, 2, 0, 0, 1, now(), now(), '{}')`,
		`insert into pools values ('p1', 'eu', true, 1, 'm1', '{WEU}', null, null, 'random', 1, now(), now(), '{}')`,
		`insert into origins values ('p1', 0, 'a', '192.0.2.1', true, 0.5, 'zone-1')`,
		`insert into load_balancers values ('l1', 'z1', 'www.glb.example.com', true, 30, 'off', 1, 'proximity',
			'ZONAL_AFFINITY_DISABLED', 0, 1, 1, now(), now(), '{}')`,
		`insert into load_balancer_pools values ('l1', 'default', '', 0, 'p1', null), ('l1', 'fallback', '', 0, 'p1', null),
			('l1', 'random_weight', '', 0, 'p1', 0.5)`,
	}
	for _, q := range setup {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, tc := range []struct{ name, sql, code string }{
		{"origin weight above 1", `insert into origins values ('p1', 1, 'b', '192.0.2.2', true, 1.5, '')`, "23514"},
		{"origin name twice in a pool", `insert into origins values ('p1', 1, 'a', '192.0.2.2', true, 1, '')`, "23505"},
		{"minimum_origins 0", `update pools set minimum_origins = 0`, "23514"},
		{"unknown region", `update pools set check_regions = '{MARS}'`, "23514"},
		{"unknown monitor", `update pools set monitor_id = 'nope'`, "23503"},
		{"zone name twice", `insert into zones values ('z2', 'glb.example.com', 300, 1, 1, now(), now(), '{}')`, "23505"},
		{"zone name not canonical", `update zones set name = 'GLB.example.com.'`, "23514"},
		{"ttl 0", `update load_balancers set ttl = 0`, "23514"},
		{"ttl above a day", `update load_balancers set ttl = 86401`, "23514"},
		{"unknown steering", `update load_balancers set steering_policy = 'roundrobin'`, "23514"},
		{"spillover ratio above 1", `update load_balancers set spillover_ratio = 1.1`, "23514"},
		{"unknown zone", `update load_balancers set zone_id = 'nope'`, "23503"},
		{"unknown pool", `insert into load_balancer_pools values ('l1', 'default', '', 1, 'nope', null)`, "23503"},
		{"second fallback", `insert into load_balancer_pools values ('l1', 'fallback', '', 1, 'p1', null)`, "23514"},
		{"bad region key", `insert into load_balancer_pools values ('l1', 'region', 'MARS', 0, 'p1', null)`, "23514"},
		{"random weight missing", `insert into load_balancer_pools values ('l1', 'random_weight', '', 1, 'p1', null)`, "23514"},
		{"delete a used pool", `delete from pools where id = 'p1'`, "23503"},
		{"delete a used zone", `delete from zones where id = 'z1'`, "23503"},
		{"delete a used monitor", `delete from monitors where id = 'm1'`, "23503"},
		{"cidr with host bits", `insert into networks values ('n1', '10.0.0.1/8', '', '', '', null, null, 1, now(), now(), '{}')`, "22P02"},
		{"cidr twice", `insert into networks values ('n1', '10.0.0.0/8', '', '', '', null, null, 1, now(), now(), '{}'),
			('n2', '10.0.0.0/8', '', '', '', null, null, 1, now(), now(), '{}')`, "23505"},
		{"latitude alone", `insert into networks values ('n1', '10.0.0.0/8', '', '', '', 45, null, 1, now(), now(), '{}')`, "23514"},
		{"bad id", `insert into zones values ('a/b', 'x.example.com', 300, 1, 1, now(), now(), '{}')`, "23514"},
		{"second revision row", `insert into glb_revision values (false, 0)`, "23514"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tx, err := conn.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			_, err = tx.Exec(ctx, tc.sql)
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != tc.code {
				t.Errorf("%s: got %v, want SQLSTATE %s", tc.sql, err, tc.code)
			}
		})
	}
}

// TestZoneRecordsMoved: migration 021 moves every zone's records out of
// its document into zone_records rows, all of them in their order, with
// their TTL and owner, and leaves a zone without records (null or none)
// without rows; the document keeps everything else.
func TestZoneRecordsMoved(t *testing.T) {
	t.Parallel()
	conn := connect(t, pgtest.EmptyURL(t))
	ctx := t.Context()
	if err := migrations.Up(ctx, conn); err != nil {
		t.Fatal(err)
	}
	// The state before 021: records inside the documents, no rows.
	if _, err := conn.Exec(ctx, "drop table zone_records"); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	zones := map[string]string{
		"two":  `{"id": "two", "name": "two.example", "ttl": 300, "records": [{"name": "b.two.example", "type": "TXT", "content": "\"1\"", "ttl": 60}, {"name": "a.two.example", "type": "A", "content": "192.0.2.1", "owner": "ext"}]}`,
		"null": `{"id": "null", "name": "null.example", "ttl": 300, "records": null}`,
		"none": `{"id": "none", "name": "none.example", "ttl": 300}`,
	}
	for id, doc := range zones {
		if _, err := conn.Exec(ctx, "insert into zones (id, name, ttl, serial, revision, created_on, modified_on, doc) values ($1, $2, 300, 1, 1, $3, $3, $4::jsonb)",
			id, id+".example", now, doc); err != nil {
			t.Fatal(err)
		}
	}
	sql, err := fs.ReadFile(migrations.FS, "021_zone_records.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, string(sql)); err != nil {
		t.Fatalf("021: %v", err)
	}
	rows, err := conn.Query(ctx, "select zone_id, name, type, content, ttl, owner from zone_records order by zone_id, seq")
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var id, name, typ, content, owner string
		var ttl int64
		err := r.Scan(&id, &name, &typ, &content, &ttl, &owner)
		return fmt.Sprintf("%s %s %s %s %d %q", id, name, typ, content, ttl, owner), err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`two b.two.example TXT "1" 60 ""`, `two a.two.example A 192.0.2.1 0 "ext"`}
	if !slices.Equal(got, want) {
		t.Fatalf("rows %q, want %q", got, want)
	}
	var left int
	if err := conn.QueryRow(ctx, "select count(*) from zones where doc ? 'records' or doc->>'name' is null").Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d documents still hold records or lost their name (%v)", left, err)
	}
}
