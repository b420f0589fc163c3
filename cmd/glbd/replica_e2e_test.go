package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/miekg/dns"

	"github.com/glb-dns/glb/internal/pgserver"
)

// primaryAndReplica starts a primary and a streaming replica of it
// (pg_basebackup -R) of the test's own; with sync, the primary commits
// only once the replica has the commit (synchronous_standby_names,
// synchronous_commit = on).
func primaryAndReplica(t *testing.T, sync bool) (primary, replica *pgserver.Cluster) {
	t.Helper()
	var settings []string
	if sync {
		settings = []string{"synchronous_standby_names = 'replica1'", "synchronous_commit = on"}
	}
	// Not t.TempDir: under root the server runs as postgres, which must
	// reach the directory.
	dir, err := os.MkdirTemp("", "glb-replica-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	primary, err = pgserver.Init(dir+"/primary", settings...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = primary.Remove() })
	if err := primary.Start(); err != nil {
		t.Fatal(err)
	}
	// A promoted replica must not wait for a standby of its own: the
	// primary's synchronous_standby_names came with the base backup.
	replica, err = primary.Replica(dir+"/replica", "replica1", "synchronous_standby_names = ''")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = replica.Remove() })
	if err := replica.Start(); err != nil {
		t.Fatal(err)
	}
	return primary, replica
}

func execSQL(t *testing.T, url, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// storeOf is the store part of node's view as g's API shows it.
func storeOf(g *glbd, node string) string {
	v, ok := nodeNamed(g.nodes(), node)
	if !ok || v.Store == nil {
		return "none"
	}
	return v.Store.Follows + " " + v.Store.Primary
}

// TestReadReplica: a node that follows the store on a replica answers a
// write made on the primary within 1 s (the replay lag here is
// milliseconds); with the replica's replay paused it follows on the
// primary within --max-replica-lag + 1 s, and back on the replica once
// replay resumes.
func TestReadReplica(t *testing.T) {
	t.Parallel()
	primary, replica := primaryAndReplica(t, false)
	const maxLag = 2 * time.Second
	a := startGlbd(t, "", "--database-url", primary.URL(), "--database-read-url", replica.URL(),
		"--max-replica-lag", maxLag.String(), "--node", "a")
	web, _, _ := configure(t, a)
	answersWithin(t, a, "create, followed on the replica", "192.0.2.1", "192.0.2.2", "192.0.2.3")
	eventually(t, 3*time.Second, "node a follows on the replica", func() (bool, string) {
		s := storeOf(a, "a")
		return s == "replica "+primary.HostPort(), s
	})

	execSQL(t, replica.URL(), "select pg_wal_replay_pause()")
	a.must("PATCH", "/api/v1/pools/"+web["id"].(string), map[string]any{"origins": []map[string]any{
		{"name": "a", "address": "192.0.2.1", "weight": 0}, {"name": "b", "address": "192.0.2.2"}, {"name": "c", "address": "192.0.2.3"},
	}})
	took := eventually(t, maxLag+time.Second, "the write answered from the primary, the replica paused", func() (bool, string) {
		got, status := dig(t, a.dns, "www.glb.example.com", "A")
		return strings.Join(got, ",") == "192.0.2.2,192.0.2.3", status + " " + strings.Join(got, ",")
	})
	t.Logf("replay paused: answered after %v (--max-replica-lag %v)", took.Round(time.Millisecond), maxLag)
	eventually(t, 3*time.Second, "node a follows on the primary", func() (bool, string) {
		s := storeOf(a, "a")
		return strings.HasPrefix(s, "primary "), s
	})

	execSQL(t, replica.URL(), "select pg_wal_replay_resume()")
	eventually(t, 5*time.Second, "node a follows on the replica again", func() (bool, string) {
		s := storeOf(a, "a")
		return strings.HasPrefix(s, "replica "), s
	})
}

// TestPrimaryFailover: two nodes on a multi-host URL
// (target_session_attrs=read-write), a client writing every 100 ms
// through node a, the primary killed (SIGKILL) and the replica promoted:
// DNS answers every query throughout, writes fail for at most the
// promotion time + 5 s, every acknowledged write is on the new primary
// (synchronous replication), and a change made after reaches the other
// node (its listener found the new primary).
func TestPrimaryFailover(t *testing.T) {
	t.Parallel()
	primary, replica := primaryAndReplica(t, true)
	url := fmt.Sprintf("postgres://postgres@%s,%s/postgres?sslmode=disable&target_session_attrs=read-write",
		primary.HostPort(), replica.HostPort())
	a, b := startGlbd(t, "", "--database-url", url, "--node", "a"), (*glbd)(nil)
	b = startGlbd(t, "", "--database-url", url, "--node", "b", "--migrate=false")
	web, _, _ := configure(t, a)
	want := "192.0.2.1,192.0.2.2,192.0.2.3"
	answersWithin(t, b, "create on a, seen on b", strings.Split(want, ",")...)

	// DNS: both nodes asked every 20 ms until the end.
	stop := make(chan struct{})
	var sent, answered atomic.Int64
	var wg sync.WaitGroup
	for _, g := range []*glbd{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &dns.Client{Timeout: time.Second}
			m := new(dns.Msg)
			m.SetQuestion("www.glb.example.com.", dns.TypeA)
			for {
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
				sent.Add(1)
				if r, _, err := c.Exchange(m, g.dns); err == nil && r.Rcode == dns.RcodeSuccess && len(r.Answer) > 0 {
					answered.Add(1)
				}
			}
		}()
	}

	// Writes: a pool every 100 ms through node a.
	type write struct {
		at time.Time
		ok bool
		id string
	}
	var wmu sync.Mutex
	var writes []write
	wg.Add(1)
	go func() {
		defer wg.Done()
		client := &http.Client{Timeout: 2 * time.Second}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			name := fmt.Sprintf("w%04d", i)
			body := fmt.Sprintf(`{"name":%q,"origins":[{"name":"o","address":"192.0.2.9"}]}`, name)
			at := time.Now()
			resp, err := client.Post(a.api+"/api/v1/pools", "application/json", strings.NewReader(body))
			ok := err == nil && resp.StatusCode == http.StatusCreated
			if resp != nil {
				resp.Body.Close()
			}
			wmu.Lock()
			writes = append(writes, write{at: at, ok: ok, id: name})
			wmu.Unlock()
		}
	}()

	time.Sleep(time.Second) // writes and answers before the crash
	killed := time.Now()
	if err := primary.Kill(); err != nil {
		t.Fatal(err)
	}
	// Whoever promotes takes a while to decide the primary is gone; the
	// nodes' listeners retry meanwhile.
	time.Sleep(5 * time.Second)
	if err := replica.Promote(); err != nil {
		t.Fatal(err)
	}
	promotion := time.Since(killed)
	t.Logf("primary killed, replica promoted in %v", promotion.Round(time.Millisecond))
	// Writes resume.
	eventually(t, promotion+10*time.Second, "a write succeeds on the new primary", func() (bool, string) {
		wmu.Lock()
		defer wmu.Unlock()
		n := len(writes)
		return n > 0 && writes[n-1].ok && writes[n-1].at.After(killed), fmt.Sprintf("%d writes", n)
	})
	// Notifications follow: b's listener is back within its longest
	// backoff (2 s) of the promotion, and a change on a reaches b
	// through the new primary.
	eventually(t, promotion+3*time.Second-time.Since(killed), "node b listens on the new primary", func() (bool, string) {
		n := strings.Count(b.logs.String(), "change listener connected")
		return n >= 2, fmt.Sprintf("%d connections", n)
	})
	a.must("PATCH", "/api/v1/pools/"+web["id"].(string), map[string]any{"origins": []map[string]any{
		{"name": "a", "address": "192.0.2.1"}, {"name": "b", "address": "192.0.2.2", "weight": 0}, {"name": "c", "address": "192.0.2.3"},
	}})
	answersWithin(t, b, "a change after the failover, seen on b", "192.0.2.1", "192.0.2.3")
	close(stop)
	wg.Wait()

	if s, n := answered.Load(), sent.Load(); s != n || n == 0 {
		t.Errorf("DNS answered %d of %d queries during the failover", s, n)
	} else {
		t.Logf("DNS answered %d of %d queries", s, n)
	}
	// The outage: from the first write that failed to the first that
	// succeeded after the last failure.
	var firstFail, resumed time.Time
	var acked []string
	for _, w := range writes {
		if w.ok {
			acked = append(acked, w.id)
			if !firstFail.IsZero() && resumed.IsZero() {
				resumed = w.at
			}
			continue
		}
		if firstFail.IsZero() {
			firstFail = w.at
		}
		resumed = time.Time{}
	}
	if !firstFail.IsZero() {
		window := resumed.Sub(firstFail)
		t.Logf("writes failed for %v (%d writes, %d acknowledged)", window.Round(time.Millisecond), len(writes), len(acked))
		if window > promotion+5*time.Second {
			t.Errorf("writes failed for %v, more than the promotion (%v) + 5 s", window, promotion)
		}
	}
	// Every acknowledged write is on the new primary.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, replica.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var missing []string
	if err := conn.QueryRow(ctx, `select coalesce(array_agg(n), '{}') from unnest($1::text[]) n
		where not exists (select 1 from pools where doc->>'name' = n)`, acked).Scan(&missing); err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Errorf("acknowledged writes missing on the new primary: %v", missing)
	}
	for _, g := range []*glbd{a, b} {
		name := map[*glbd]string{a: "a", b: "b"}[g]
		eventually(t, 3*time.Second, "node "+name+" shows the new primary", func() (bool, string) {
			s := storeOf(a, name)
			return s == "primary "+replica.HostPort(), s
		})
	}
}
