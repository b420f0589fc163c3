package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
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

// attempts records when the listener tried to connect: each failure it
// logs ("change listener disconnected") and each success ("connected").
type attempts struct {
	mu sync.Mutex
	at []time.Time
}

func (a *attempts) Enabled(context.Context, slog.Level) bool { return true }
func (a *attempts) WithAttrs([]slog.Attr) slog.Handler       { return a }
func (a *attempts) WithGroup(string) slog.Handler            { return a }
func (a *attempts) Handle(_ context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, "change listener") {
		a.mu.Lock()
		a.at = append(a.at, time.Now())
		a.mu.Unlock()
	}
	return nil
}

// The listener tries again at least every 2 s (maxBackoff) however long
// the server refuses it, so that a node follows changes again within
// about that once the server takes connections, as when a promoted
// replica starts taking them. The database refuses new connections for
// 16 s while the listener's connection is killed: a backoff left to
// double (0.1, 0.2, ... 6.4 s, each jittered down to half) would wait 3.2
// s or more within that time, and for 6.4 s or more from 12.7 s on.
func TestListenerRetriesWithinTwoSeconds(t *testing.T) {
	t.Parallel()
	a, url := pgtest.NewStore(t)
	log := &attempts{}
	b, err := postgres.Open(t.Context(), url, postgres.WithLogger(slog.New(log)))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := t.Context()
	ch := b.Watch(ctx)
	select {
	case <-ch: // connected
	case <-time.After(15 * time.Second):
		t.Fatal("the listener never connected")
	}
	// a's writes use a connection it holds from before the refusal.
	if _, err := a.Revision(ctx); err != nil {
		t.Fatal(err)
	}
	// A database cannot refuse connections from a session inside it.
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	db := cfg.Database
	cfg.Database = "postgres"
	admin, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	allow := func(on bool) {
		t.Helper()
		if _, err := admin.Exec(ctx, fmt.Sprintf("alter database %q with allow_connections %t", db, on)); err != nil {
			t.Fatal(err)
		}
	}
	allow(false)
	defer func() {
		_, _ = admin.Exec(context.Background(), fmt.Sprintf("alter database %q with allow_connections true", db))
	}()
	var killed int
	err = admin.QueryRow(ctx, `select count(pg_terminate_backend(pid)) from pg_stat_activity
		where datname = $1 and application_name = $2`, db, postgres.ListenerApplicationName).Scan(&killed)
	if err != nil || killed != 1 {
		t.Fatalf("terminate listener: killed %d, %v", killed, err)
	}
	log.mu.Lock()
	log.at = nil
	log.mu.Unlock()
	time.Sleep(16 * time.Second)
	for len(ch) > 0 {
		<-ch
	}
	allow(true)
	opened := time.Now()
	if _, err := a.Create(ctx, storetest.Zone("glb.example.com")); err != nil {
		t.Fatal(err)
	}
	rev, _ := a.Revision(ctx)
	// At most maxBackoff to the next attempt, then a connection and a
	// query: 5 s leaves a loaded machine room.
	deadline := time.After(5 * time.Second)
wait:
	for {
		select {
		case c := <-ch:
			if c.Revision >= rev {
				break wait
			}
		case <-deadline:
			t.Fatalf("node b did not follow a write within 5 s of the server taking connections again")
		}
	}
	t.Logf("following again %v after the server took connections", time.Since(opened).Round(time.Millisecond))
	// Between two attempts: the wait (at most 2 s) and a refused
	// connection (milliseconds; a second on a loaded machine).
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.at) < 8 {
		t.Fatalf("%d attempts in 16 s refused, want 8 or more (0.1 + 0.2 + ... + 1.6 s, then 2 s apart)", len(log.at))
	}
	for i := 1; i < len(log.at); i++ {
		if gap := log.at[i].Sub(log.at[i-1]); gap > 3*time.Second {
			t.Errorf("attempt %d came %v after the one before, want at most maxBackoff (2 s) and a refusal", i, gap.Round(time.Millisecond))
		}
	}
}

// A node's packed view is packed again once the changes after it reach
// the threshold (WithRepackAt; an eighth of the view when more), not
// before: until then a first read is the view and the rows after it.
func TestHealthViewRepacked(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	s, err := postgres.Open(t.Context(), url, postgres.WithRepackAt(3))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	db, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	viewSeq := func() int64 {
		t.Helper()
		var seq int64
		if err := db.QueryRow(ctx, "select seq from node_health_view where node = 'a'").Scan(&seq); err != nil {
			t.Fatal(err)
		}
		return seq
	}
	at := pools.StoreTime(time.Now())
	st := func(origin string, healthy bool) pools.OriginState {
		return pools.OriginState{Pool: "p", Origin: origin, Healthy: healthy, CheckedAt: at}
	}
	if err := s.PublishHealth(ctx, pools.HealthUpdate{Node: "a", Region: "WEU", Published: at, Full: true,
		Origins: []pools.OriginState{st("o1", true), st("o2", true), st("o3", true), st("o4", true)}}); err != nil {
		t.Fatal(err)
	}
	packed := viewSeq()
	for i, o := range []string{"o1", "o2", "o3"} {
		if err := s.PublishHealth(ctx, pools.HealthUpdate{Node: "a", Region: "WEU", Published: at,
			Origins: []pools.OriginState{st(o, false)}}); err != nil {
			t.Fatal(err)
		}
		got := viewSeq()
		switch {
		case i < 2 && got != packed:
			t.Fatalf("view packed again at seq %d after %d change(s), fewer than 3", got, i+1)
		case i == 2 && got <= packed:
			t.Fatalf("view still at seq %d after 3 changes", got)
		}
	}
	ups, err := s.HealthSince(ctx, nil)
	if err != nil || len(ups) != 1 || len(ups[0].Origins) != 4 {
		t.Fatalf("first read after the repack: %+v, %v", ups, err)
	}
	for _, o := range ups[0].Origins {
		if o.Healthy != (o.Origin == "o4") {
			t.Errorf("first read after the repack: %s healthy %v", o.Origin, o.Healthy)
		}
	}
}

// A node of a version from before the packed views (migration 024)
// publishes rows only: a reader without a cursor reads its live rows
// (not the gone ones), then the rows after its cursor; and a packed view
// of an earlier epoch, left by that node when it ran a newer version, is
// not read for its new epoch.
func TestHealthOfANodeWithoutAPackedView(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	s, err := postgres.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	db, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := db.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	at := pools.StoreTime(time.Now())
	// "b" ran this version first: a packed view of epoch 1.
	if err := s.PublishHealth(ctx, pools.HealthUpdate{Node: "b", Region: "WEU", Published: at, Full: true,
		Origins: []pools.OriginState{{Pool: "p", Origin: "packed", Healthy: true}}}); err != nil {
		t.Fatal(err)
	}
	// What an older version writes at a full publication: the heartbeat
	// of a new epoch, its rows, nothing packed.
	older := func(node string, epoch int64) {
		t.Helper()
		exec(`insert into node_heartbeat (node, region, published, epoch, seq) values ($1, 'WEU', $2, $3, 1)
			on conflict (node) do update set published = excluded.published, epoch = excluded.epoch, seq = 1`, node, at, epoch)
		exec(`delete from node_origin_health where node = $1`, node)
		exec(`insert into node_origin_health (node, pool, origin, seq, gone, healthy, reason, rtt_ns) values
			($1, 'p', 'up', 1, false, true, '', 5000000), ($1, 'p', 'down', 1, false, false, 'refused', 0),
			($1, 'p', 'left', 1, true, true, '', 0)`, node)
	}
	older("a", 1)
	older("b", 2)
	ups, err := s.HealthSince(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	cursors := map[string]pools.HealthCursor{}
	for _, u := range ups {
		cursors[u.Node] = u.Cursor
		got := map[string]bool{}
		for _, o := range u.Origins {
			got[o.Origin] = o.Healthy
		}
		if !u.Full || len(got) != 2 || !got["up"] || got["down"] || len(u.Removed) != 0 {
			t.Errorf("first read of %s: full %v, origins %v, removed %v; want full, up healthy and down not, nothing removed (no gone row, nothing packed)",
				u.Node, u.Full, got, u.Removed)
		}
	}
	if len(ups) != 2 {
		t.Fatalf("first read: %d nodes, want a and b", len(ups))
	}
	// The older version's next publication: one change.
	exec(`update node_heartbeat set seq = 2 where node = 'a'`)
	exec(`update node_origin_health set seq = 2, healthy = true, reason = '' where node = 'a' and origin = 'down'`)
	ups, err = s.HealthSince(ctx, cursors)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range ups {
		switch {
		case u.Node == "a" && (u.Full || len(u.Origins) != 1 || u.Origins[0].Origin != "down" || !u.Origins[0].Healthy):
			t.Errorf("a after its cursor: full %v, %+v; want only down, healthy", u.Full, u.Origins)
		case u.Node == "b" && (u.Full || len(u.Origins) != 0):
			t.Errorf("b after its cursor: full %v, %+v; want nothing", u.Full, u.Origins)
		}
	}
}
