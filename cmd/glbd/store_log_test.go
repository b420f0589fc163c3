package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/glb-dns/glb/internal/testnode"
	"github.com/glb-dns/glb/pools/postgres"
	"github.com/glb-dns/glb/pools/postgres/pgtest"
)

// TestStoreWarningsReachTheNodeLog: the PostgreSQL store glbd opens logs
// through glbd's logger, so that its change listener losing the database is
// seen by the operator rather than discarded.
func TestStoreWarningsReachTheNodeLog(t *testing.T) {
	url := pgtest.URL(t)
	logs := &testnode.Logs{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store, err := openStore(ctx, &Config{DatabaseURL: url}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	store.Watch(ctx)
	waitForLog(t, logs, `msg="change listener connected"`)

	// Cut the listener's connection from the server side, as a database
	// restart or a network cut would.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var cut int
	err = conn.QueryRow(ctx, `select count(pg_terminate_backend(pid)) from pg_stat_activity
		where application_name = $1 and datname = current_database()`, postgres.ListenerApplicationName).Scan(&cut)
	if err != nil || cut != 1 {
		t.Fatalf("terminate the listener: %d cut, %v", cut, err)
	}
	line := waitForLog(t, logs, `msg="change listener disconnected"`)
	if !strings.Contains(line, "level=WARN") || !strings.Contains(line, "component=store.postgres") {
		t.Errorf("the disconnection is not a store warning: %s", line)
	}
}

// waitForLog polls logs until a line contains want and returns that line.
func waitForLog(t *testing.T, logs *testnode.Logs, want string) string {
	t.Helper()
	var found string
	testnode.Eventually(t, 10*time.Second, "a log line with "+want, func() (bool, string) {
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, want) {
				found = line
				return true, ""
			}
		}
		return false, "logs:\n" + logs.String()
	})
	return found
}
