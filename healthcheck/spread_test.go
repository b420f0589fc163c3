package healthcheck

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

// TestLargeBatchSpreadOverInterval: a batch of new origins larger than
// the probes allowed in flight has its first checks spread over the
// interval, not fired at once (which would bunch every later round too).
func TestLargeBatchSpreadOverInterval(t *testing.T) {
	t.Parallel()
	const n = 400
	var mu sync.Mutex
	var seen []time.Time
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, time.Now())
		mu.Unlock()
	}))
	host, port := addrOf(t, srv.URL)
	m := monitor(pools.MonitorHTTP)
	m.Port, m.Interval = port, 200 // 20 s in test units
	cfg := &pools.Config{Monitors: []pools.Monitor{m}}
	for i := range n / 40 {
		p := pools.DefaultPool()
		p.ID, p.Monitor = fmt.Sprintf("p%d", i), m.ID
		for j := range 40 {
			o := pools.DefaultOrigin()
			o.Name, o.Address = fmt.Sprintf("o%d", j), host
			p.Origins = append(p.Origins, o)
		}
		cfg.Pools = append(cfg.Pools, p)
	}
	c := New(Options{unit: testUnit, MaxConcurrent: 16})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	c.Update(cfg)
	go c.Run(ctx)
	// What falls in the first quarter of the interval is the property:
	// evenly spread, a quarter of the origins; at once, as many as the
	// machine can probe in that time (all of them).
	quarter := 200 * testUnit / 4
	<-time.After(time.Until(start.Add(quarter)))
	mu.Lock()
	early := len(seen)
	mu.Unlock()
	if early == 0 || early > n/2 {
		t.Errorf("%d of %d first checks in the first quarter of the interval; want about a quarter", early, n)
	}
}
