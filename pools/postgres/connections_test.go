package postgres_test

import (
	"context"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools/postgres"
	"github.com/glb-dns/glb/pools/postgres/pgtest"
)

// A call whose deadline passes while its statement runs leaves the
// connection alive when the statement ends soon after: closing it would
// cost the server a new backend for the next call, which is what turned
// 64 nodes' timeouts into a storm of connections.
func TestDeadlineKeepsTheConnection(t *testing.T) {
	t.Parallel()
	_, dsn := pgtest.NewStore(t)
	s, err := postgres.Open(t.Context(), withQuery(t, dsn, "pool_max_conns", "1"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before, err := s.BackendPID(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	_ = s.Sleep(ctx, 500*time.Millisecond) // ends 400 ms after its deadline
	cancel()
	after, err := s.BackendPID(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("backend %d after the deadline, %d before: the connection was closed", after, before)
	}
}

// A server that accepted the connection but is slow to start its backend
// is waited for: giving up only queues another connection behind it.
func TestSlowStartIsWaitedFor(t *testing.T) {
	t.Parallel()
	_, dsn := pgtest.NewStore(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	// Accepts at once, then holds each connection 4 s (longer than the
	// 3 s a dial may take) before the server sees it.
	proxy := slowProxy(t, u.Host, 4*time.Second)
	u.Host = proxy
	s, err := postgres.Open(t.Context(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("a server slow to start a backend: %v", err)
	}
}

func withQuery(t *testing.T, dsn, k, v string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set(k, v)
	u.RawQuery = q.Encode()
	return u.String()
}

// slowProxy forwards connections to target, each after hold.
func slowProxy(t *testing.T, target string, hold time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	t.Cleanup(func() {
		close(done)
		ln.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				select {
				case <-time.After(hold):
				case <-done:
					return
				}
				up, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer up.Close()
				go func() {
					<-done
					c.Close()
					up.Close()
				}()
				go func() { _, _ = io.Copy(up, c); up.Close() }()
				_, _ = io.Copy(c, up)
			}()
		}
	}()
	return ln.Addr().String()
}
