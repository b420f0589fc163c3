package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/glb-dns/glb/pools"
)

// eventsKeepAlive is how often an idle stream carries a comment, so that
// proxies and the browser see it alive.
const eventsKeepAlive = 15 * time.Second

// RevisionEvent is the data of a "revision" event: the configuration
// revision now stored. The first event of every stream is one.
type RevisionEvent struct {
	Revision int64 `json:"revision"`
}

// HealthEvent is the data of a "health" event: the origins whose agreed
// state changed since the previous one.
type HealthEvent struct {
	Changes []HealthChange `json:"changes"`
}

// HealthChange is one origin's new agreed state.
type HealthChange struct {
	Pool    string `json:"pool"`
	Origin  string `json:"origin"`
	Healthy bool   `json:"healthy"`
	Reason  string `json:"reason,omitempty"`
}

// events answers GET /events with server-sent events: "revision" when the
// stored configuration revision moves, "health" when the agreed health of
// an origin changes. It compares on a fixed cadence rather than
// subscribing, so that a stream costs the same whatever the write rate and
// a dropped store connection only delays it.
func (s *server) events(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	// A client that lost the stream reconnects after this many ms.
	fmt.Fprint(w, "retry: 2000\n\n")

	interval := s.EventsInterval
	if interval <= 0 {
		interval = time.Second
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	lastRev := int64(-1)
	lastHealth := s.healthStates()
	idle := time.Now()
	for {
		rev, err := s.Store.Revision(r.Context())
		if err == nil && rev != lastRev {
			lastRev = rev
			writeEvent(w, "revision", RevisionEvent{Revision: rev})
			idle = time.Now()
		}
		cur := s.healthStates()
		if ch := healthChanges(lastHealth, cur); len(ch) > 0 {
			writeEvent(w, "health", HealthEvent{Changes: ch})
			idle = time.Now()
		}
		lastHealth = cur
		if time.Since(idle) >= eventsKeepAlive {
			fmt.Fprint(w, ": keep-alive\n\n")
			idle = time.Now()
		}
		if err := rc.Flush(); err != nil {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}

func writeEvent(w http.ResponseWriter, name string, data any) {
	b, _ := json.Marshal(data)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
}

func (s *server) healthStates() *pools.Health {
	if s.Health == nil {
		return nil
	}
	return s.Health()
}

// healthChanges lists the origins whose state differs, in a stable order;
// an origin absent from a view counts as healthy, as steering counts it.
// Only the pools that differ are compared, so a tick costs what changed.
func healthChanges(prev, cur *pools.Health) []HealthChange {
	state := func(p *pools.PoolHealth, name string) pools.OriginHealth {
		if p != nil {
			if v, ok := p.Origins[name]; ok {
				return v
			}
		}
		return pools.OriginHealth{Healthy: true}
	}
	var out []HealthChange
	for id := range pools.ChangedPools(prev, cur) {
		was, is := prev.Pool(id), cur.Pool(id)
		seen := map[string]bool{}
		for _, p := range []*pools.PoolHealth{is, was} {
			if p == nil {
				continue
			}
			for name := range p.Origins {
				if seen[name] {
					continue
				}
				seen[name] = true
				if a, b := state(was, name), state(is, name); a != b {
					out = append(out, HealthChange{Pool: id, Origin: name, Healthy: b.Healthy, Reason: b.Reason})
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Pool != out[j].Pool {
			return out[i].Pool < out[j].Pool
		}
		return out[i].Origin < out[j].Origin
	})
	return out
}
