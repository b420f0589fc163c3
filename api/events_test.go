package api_test

import (
	"bufio"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/pools"
)

// TestEventsStream: the stream opens with the revision, says when a write
// moves it and when an origin's agreed health changes; HEAD answers at once.
func TestEventsStream(t *testing.T) {
	t.Parallel()
	var health atomic.Pointer[pools.Health]
	health.Store(&pools.Health{})
	e := newEnv(t, func(o *api.Options) {
		o.Health = func() *pools.Health { return health.Load() }
		o.EventsInterval = 20 * time.Millisecond
	})
	f := e.fixture()

	head := e.do("HEAD", "/api/v1/events", nil)
	if head.status != http.StatusOK || head.header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("HEAD /events: %d %q", head.status, head.header.Get("Content-Type"))
	}

	req, _ := http.NewRequest("GET", e.srv.URL+"/api/v1/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	// next returns the next event's name and data.
	next := func() (string, string) {
		t.Helper()
		var name string
		deadline := time.After(5 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatal("stream ended")
				}
				if v, ok := strings.CutPrefix(l, "event: "); ok {
					name = v
				}
				if v, ok := strings.CutPrefix(l, "data: "); ok {
					return name, v
				}
			case <-deadline:
				t.Fatal("no event within 5s")
			}
		}
	}
	name, data := next()
	if name != "revision" || !strings.HasPrefix(data, `{"revision":`) {
		t.Fatalf("first event %s %s", name, data)
	}
	e.do("PATCH", "/api/v1/pools/"+f.pool, map[string]any{"description": "moved"})
	if name, data2 := next(); name != "revision" || data2 == data {
		t.Errorf("after a write: %s %s (before %s)", name, data2, data)
	}
	health.Store(pools.NewHealth(map[pools.OriginKey]pools.OriginHealth{
		{Pool: f.pool, Origin: "a"}: {Healthy: false, Reason: "connection refused"},
	}, nil))
	want := `{"changes":[{"pool":"` + f.pool + `","origin":"a","healthy":false,"reason":"connection refused"}]}`
	if name, data := next(); name != "health" || data != want {
		t.Errorf("after a health change: %s %s, want health %s", name, data, want)
	}

	// An origin that leaves the health view (removed, or its monitor
	// detached) counts as healthy again, and the stream says so, or a
	// console would keep it red.
	health.Store(pools.NewHealth(map[pools.OriginKey]pools.OriginHealth{
		{Pool: f.pool, Origin: "a"}: {Healthy: false, Reason: "connection refused"},
		{Pool: f.pool, Origin: "b"}: {Healthy: false, Reason: "timeout"},
	}, nil))
	want = `{"changes":[{"pool":"` + f.pool + `","origin":"b","healthy":false,"reason":"timeout"}]}`
	if name, data := next(); name != "health" || data != want {
		t.Errorf("after b went down: %s %s, want health %s", name, data, want)
	}
	health.Store(pools.NewHealth(map[pools.OriginKey]pools.OriginHealth{
		{Pool: f.pool, Origin: "b"}: {Healthy: false, Reason: "timeout"},
	}, nil))
	want = `{"changes":[{"pool":"` + f.pool + `","origin":"a","healthy":true}]}`
	if name, data := next(); name != "health" || data != want {
		t.Errorf("after a left the view: %s %s, want health %s", name, data, want)
	}
	health.Store(pools.NewHealth(nil, nil)) // the pool's monitor detached
	want = `{"changes":[{"pool":"` + f.pool + `","origin":"b","healthy":true}]}`
	if name, data := next(); name != "health" || data != want {
		t.Errorf("after the pool left the view: %s %s, want health %s", name, data, want)
	}
}
