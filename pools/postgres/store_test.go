package postgres_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/pools/postgres"
	"github.com/glb-dns/glb/pools/postgres/pgtest"
	"github.com/glb-dns/glb/pools/storetest"
)

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) pools.Store {
		s, _ := pgtest.NewStore(t)
		return s
	})
}

// The health contract with each node's view packed again after every
// change: a first read is the packed view and nothing after it, or the
// view and the rows after it when a change did not repack.
func TestContractRepacked(t *testing.T) {
	storetest.RunHealth(t, func(t *testing.T) pools.Store {
		s, err := postgres.Open(t.Context(), pgtest.URL(t), postgres.WithRepackAt(1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// closedURL returns a URL whose port nothing listens on.
func closedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "postgres://postgres@" + addr + "/glb?sslmode=disable"
}

func TestDatabaseDownIsUnavailable(t *testing.T) {
	t.Parallel()
	s, err := postgres.Open(t.Context(), closedURL(t), postgres.WithTimeout(2*time.Second))
	if err != nil {
		t.Fatalf("open must not need the database: %v", err)
	}
	ch := s.Watch(t.Context()) // the listener retries in the background
	ctx := t.Context()
	calls := map[string]func() error{
		"Ping":     func() error { return s.Ping(ctx) },
		"Get":      func() error { _, err := s.Get(ctx, pools.KindPool, "p"); return err },
		"List":     func() error { _, err := s.List(ctx, pools.KindPool, pools.Page{}); return err },
		"Create":   func() error { _, err := s.Create(ctx, storetest.Pool("p", "")); return err },
		"Replace":  func() error { _, err := s.Replace(ctx, storetest.Pool("p", ""), 0); return err },
		"Delete":   func() error { return s.Delete(ctx, pools.KindPool, "p", 0) },
		"Config":   func() error { _, err := s.Config(ctx); return err },
		"Revision": func() error { _, err := s.Revision(ctx); return err },
		"Publish":  func() error { return s.PublishHealth(ctx, pools.FullUpdate(pools.NodeHealth{Node: "n"})) },
		"Beat":     func() error { return s.PublishHealth(ctx, pools.HealthUpdate{Node: "n"}) },
		"Health":   func() error { _, err := s.HealthViews(ctx, ""); return err },
		"Since":    func() error { _, err := s.HealthSince(ctx, nil); return err },
	}
	for name, call := range calls {
		start := time.Now()
		err := call()
		if !errors.Is(err, pools.ErrUnavailable) {
			t.Errorf("%s: %v, want an error wrapping ErrUnavailable", name, err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("%s took %v with the database down", name, d)
		}
	}
	start := time.Now()
	s.Close()
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Close took %v while the listener was retrying", d)
	}
	if _, open := <-ch; open {
		t.Error("watch channel open after Close")
	}
}

// Two nodes on one database: a write through one is seen by the other's
// Watch, and the listener survives losing its connection.
func TestWatchAcrossNodesAndReconnect(t *testing.T) {
	t.Parallel()
	a, url := pgtest.NewStore(t)
	b, err := postgres.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := t.Context()
	ch := b.Watch(ctx)

	waitFor := func(what string, ok func(pools.Change) bool) {
		t.Helper()
		deadline := time.After(15 * time.Second)
		for {
			select {
			case c := <-ch:
				if ok(c) {
					return
				}
			case <-deadline:
				t.Fatalf("node b saw no change for %s", what)
			}
		}
	}
	// The first report comes when the listener is connected; writes before
	// it could be missed by LISTEN, and that report covers them.
	waitFor("listener start", func(pools.Change) bool { return true })

	if _, err := a.Create(ctx, storetest.Zone("glb.example.com")); err != nil {
		t.Fatal(err)
	}
	rev, _ := a.Revision(ctx)
	waitFor("a create on node a", func(c pools.Change) bool { return c.Revision >= rev })

	if err := a.PublishHealth(ctx, pools.FullUpdate(pools.NodeHealth{Node: "a", Region: "WEU"})); err != nil {
		t.Fatal(err)
	}
	waitFor("a health publication on node a", func(c pools.Change) bool { return c.Health && c.Revision == 0 })

	// Kill b's listener connection; b reconnects and keeps reporting.
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	var killed int
	err = admin.QueryRow(ctx, `select count(pg_terminate_backend(pid)) from pg_stat_activity
		where datname = current_database() and pid <> pg_backend_pid() and application_name = $1`, postgres.ListenerApplicationName).Scan(&killed)
	if err != nil || killed != 1 {
		t.Fatalf("terminate listener: killed %d, %v", killed, err)
	}
	if _, err := a.Create(ctx, storetest.Network("10.9.0.0/16")); err != nil {
		t.Fatal(err)
	}
	rev, _ = a.Revision(ctx)
	waitFor("a create after the listener lost its connection", func(c pools.Change) bool { return c.Revision >= rev })
}
