package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// cutProxy forwards TCP to target; cut drops every connection and refuses
// new ones (they are accepted and closed at once), as a store that went
// away does, and heal lets them through again.
type cutProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  []net.Conn
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			cut := p.cut
			p.mu.Unlock()
			if cut {
				c.Close()
				continue
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { io.Copy(u, c); u.Close() }()
			go func() { io.Copy(c, u); c.Close() }()
		}
	}()
	t.Cleanup(func() { ln.Close(); p.setCut(true) })
	return p
}

// setCut cuts (true) or heals (false) the way to the target.
func (p *cutProxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for _, c := range p.conns {
			c.Close()
		}
		p.conns = nil
	}
}

// TestClockRecordsOutliveAStoreCut is the acceptance of records kept when
// the store is away: two nodes reach PostgreSQL through a proxy the test
// cuts. A scheduled shift starts and another expires during the cut: DNS
// moves on time on both nodes by their clocks, both nodes hold the two
// records to write; node b restarts from its last good file during the
// cut. After the cut heals, both nodes write (or find written) the
// records, the audit log has exactly one start entry and one expiry
// entry (actor clock), and a real receiver was delivered exactly one
// notification of each.
func TestClockRecordsOutliveAStoreCut(t *testing.T) {
	t.Parallel()
	url := freshDatabase(t)
	u, _ := http.NewRequest("GET", url, nil) // parse host:port of the URL
	p := newCutProxy(t, u.URL.Host)
	proxied := strings.Replace(url, u.URL.Host, p.ln.Addr().String(), 1)
	flags := []string{"--database-url", proxied, "--notify-poll", "200ms", "--notify-retry-base", "200ms", "--notify-retry-max", "1s",
		"--outbound-allow", "127.0.0.1"} // the receiver is on loopback
	a := startGlbd(t, "", append(flags, "--node", "a")...)
	b := startGlbd(t, "", append(flags, "--node", "b", "--migrate=false")...)
	nodes := []*glbd{a, b}
	shiftWorld(t, a)
	rcv := newHookReceiver(t)
	rcv.subscribe(t, a, "/shifts", "shift", "rollout")
	const primary, secondary = "NOERROR 192.0.2.1,192.0.2.2", "NOERROR 198.51.100.1,198.51.100.2"
	bothAnswer(t, time.Now(), 10*time.Second, "configuration", primary, a, b)

	// A zone-2 shift scheduled to start during the cut; a rollout of the
	// secondary pool's weights whose second step begins and which
	// completes during it; and a shift of the primary pool that expires
	// during it, after the start.
	created := time.Now()
	starts := created.Add(12 * time.Second).UTC().Truncate(time.Millisecond)
	scheduled := a.must("POST", "/api/v1/shifts", map[string]any{"target": map[string]any{"zone": "zone-2"},
		"reason": "zone-2 maintenance", "starts_at": starts.Format(time.RFC3339Nano), "duration": "1h"})
	rollout := a.must("POST", "/api/v1/rollouts", map[string]any{"pool": "secondary", "weights": map[string]any{"b1": 0.5},
		"steps": []float64{50, 100}, "step_interval": "6s", "reason": "less on b1"})
	rolloutStarts, err := time.Parse(time.RFC3339Nano, rollout["starts_at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	expiring := a.must("POST", "/api/v1/shifts", map[string]any{"target": map[string]any{"pool": "primary"},
		"load_balancers": []string{"www"}, "reason": "bad deploy", "duration": "16s"})
	if scheduled["status"] != "scheduled" || expiring["status"] != "active" {
		t.Fatalf("shifts %v and %v, want scheduled and active", scheduled, expiring)
	}
	expires, err := time.Parse(time.RFC3339Nano, expiring["expires_at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	// Both nodes have both shifts and the rollout (written before the
	// expiring shift) once they answer from the secondary pool, and have
	// stored the rollout's first step when they hold nothing to write.
	bothAnswer(t, created, 10*time.Second, "primary shifted", secondary, a, b)
	for _, g := range nodes {
		eventually(t, 10*time.Second, "nothing pending before the cut on "+g.api, func() (bool, string) {
			v := metricValue(t, g, "glb_clock_records_pending")
			return v == 0, fmt.Sprint(v)
		})
	}
	p.setCut(true)
	if left := time.Until(rolloutStarts.Add(6 * time.Second)); left < time.Second {
		t.Fatalf("the store was cut %v before the rollout's second step: the machine is too slow for this test's margins", left)
	}
	t.Logf("store cut %v before the scheduled start", time.Until(starts).Round(time.Millisecond))

	// During the cut: the zone-2 shift starts (the secondary loses b2),
	// then the primary's shift expires (the primary without a2 answers),
	// on both nodes, by their clocks.
	bothAnswer(t, starts, 5*time.Second, "zone-2 shift started, store cut", "NOERROR 198.51.100.1", a, b)
	bothAnswer(t, expires, 5*time.Second, "primary's shift expired, store cut", "NOERROR 192.0.2.1", a, b)
	// Each node holds the start, the expiry, the rollout's second step
	// and its completion, unwritten.
	for _, g := range nodes {
		eventually(t, 10*time.Second, "records pending on "+g.api, func() (bool, string) {
			v := metricValue(t, g, "glb_clock_records_pending")
			return v == 4, fmt.Sprint(v)
		})
	}
	if status := a.call("GET", "/api/v1/audit?kind=shifts", nil, nil); status != http.StatusServiceUnavailable {
		t.Fatalf("audit with the store cut: %d, want 503", status)
	}
	// Node b restarts meanwhile and serves its last good file: it records
	// nothing from a file (the store may know better), and once it reads
	// the store it records what the clock did, as a does.
	b.stop()
	b = startGlbd(t, b.dataDir, append(flags, "--node", "b", "--migrate=false")...)
	nodes[1] = b
	if got := askWWW(t, b); got != "NOERROR 192.0.2.1" {
		t.Fatalf("b restarted from its last good file answers %s, want NOERROR 192.0.2.1", got)
	}
	if v := metricValue(t, b, "glb_clock_records_pending"); v != 0 {
		t.Fatalf("b, serving its last good file, holds %v records to write, want none", v)
	}
	p.setCut(false)
	healed := time.Now()

	// Both nodes write (or find written) their records...
	for _, g := range nodes {
		eventually(t, 30*time.Second, "records stored from "+g.api, func() (bool, string) {
			v := metricValue(t, g, "glb_clock_records_pending")
			return v == 0, fmt.Sprint(v)
		})
	}
	t.Logf("both nodes stored their records %v after the cut healed", time.Since(healed).Round(time.Millisecond))
	for _, line := range []string{`msg="shift started" node=b component=node shift=` + scheduled["id"].(string),
		`msg="shift expired" node=b component=node shift=` + expiring["id"].(string)} {
		eventually(t, 10*time.Second, "b records from the store", func() (bool, string) {
			return strings.Contains(b.logs.String(), line), line
		})
	}
	// ... and the notifications of the start and the expiry are delivered.
	type key struct{ object, state string }
	want := []key{{scheduled["id"].(string), "started"}, {expiring["id"].(string), "expired"}, {rollout["id"].(string), "completed"}}
	count := func() map[key]int {
		n := map[key]int{}
		for _, h := range rcv.hooks("/shifts") {
			if h.bad != "" {
				t.Errorf("a delivery that does not check out: %s", h.bad)
			}
			n[key{h.event.Data.Object, h.event.Data.New}]++
		}
		return n
	}
	eventually(t, 30*time.Second, "start, expiry and completion notified", func() (bool, string) {
		n := count()
		return n[want[0]] >= 1 && n[want[1]] >= 1 && n[want[2]] >= 1, describeHooks(rcv.hooks("/shifts"))
	})
	// The outbox is empty on the store's side: nothing more is on its
	// way to the receiver.
	eventually(t, 30*time.Second, "outbox empty", func() (bool, string) {
		v := metricValue(t, a, "glb_notify_pending")
		return v == 0, fmt.Sprint(v)
	})
	for _, k := range want {
		if n := count()[k]; n != 1 {
			t.Errorf("shift %s %s notified %d times, want once:%s", k.object, k.state, n, describeHooks(rcv.hooks("/shifts")))
		}
	}
	var log struct {
		Result []struct {
			Action   string    `json:"action"`
			Actor    string    `json:"actor"`
			ObjectID string    `json:"object_id"`
			Time     time.Time `json:"time"`
		} `json:"result"`
	}
	if status := a.call("GET", "/api/v1/audit?kind=shifts&per_page=100", nil, &log); status != http.StatusOK {
		t.Fatalf("audit: %d", status)
	}
	got := map[string]int{}
	for _, e := range log.Result {
		got[e.ObjectID+" "+e.Action+"/"+e.Actor]++
		switch {
		case e.Action == "start" && !e.Time.Equal(starts):
			t.Errorf("start entry dated %v, want the start %v", e.Time, starts)
		case e.Action == "expire" && !e.Time.Equal(expires):
			t.Errorf("expiry entry dated %v, want the expiry %v", e.Time, expires)
		}
	}
	for _, k := range []string{scheduled["id"].(string) + " start/clock", expiring["id"].(string) + " expire/clock"} {
		if got[k] != 1 {
			t.Errorf("audit entries %q: %d, want exactly one; all: %v", k, got[k], got)
		}
	}
	// The rollout completed once: its two steps and its completion by
	// the clock, and one write of the pool by the clock, a version of www.
	var ro struct {
		Result map[string]any `json:"result"`
	}
	a.call("GET", "/api/v1/rollouts/"+rollout["id"].(string), nil, &ro)
	if ro.Result["state"] != "completed" {
		t.Errorf("rollout after the cut: %v, want completed", ro.Result["state"])
	}
	for _, c := range []struct {
		query string
		want  int
	}{
		{"kind=rollouts&actor=clock&id=" + rollout["id"].(string), 3},
		{"kind=pools&actor=clock&id=secondary", 1},
	} {
		var entries struct {
			Result []map[string]any `json:"result"`
		}
		if status := a.call("GET", "/api/v1/audit?per_page=100&"+c.query, nil, &entries); status != http.StatusOK || len(entries.Result) != c.want {
			t.Errorf("audit %s: %d, %d entries, want %d: %v", c.query, status, len(entries.Result), c.want, entries.Result)
		}
	}
}
