package api

import (
	"net/http"
	"sort"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/glb-dns/glb/pools"
)

// PoolHealth is the body of GET /pools/{id}/health.
type PoolHealth struct {
	Pool    string `json:"pool"`
	Name    string `json:"name"`
	Enabled bool   `json:"enabled"`
	Monitor string `json:"monitor"`
	// Monitors is the pool's monitor group as configured (empty for a
	// pool with one monitor).
	Monitors       []pools.PoolMonitor `json:"monitors"`
	MinimumOrigins int                 `json:"minimum_origins"`
	// Healthy is the agreed pool state (at least minimum_origins of its
	// enabled, weighted origins healthy); absent without an agreed view.
	Healthy *bool `json:"healthy,omitempty"`
	// RTTMs is the smoothed RTT from each region, for dynamic_latency.
	RTTMs   map[string]float64 `json:"rtt_ms,omitempty"`
	Origins []OriginHealth     `json:"origins"`
}

// OriginHealth is one origin: its agreed state and every node's view.
type OriginHealth struct {
	Name    string  `json:"name"`
	Address string  `json:"address"`
	Enabled bool    `json:"enabled"`
	Weight  float64 `json:"weight"`
	Zone    string  `json:"zone"`
	// Healthy and Reason are the agreed state; absent without an agreed
	// view. An origin no node has checked yet counts as healthy.
	Healthy *bool  `json:"healthy,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Note is what the checks of a healthy origin noted, agreed across
	// the nodes: a tls monitor's days left.
	Note string `json:"note,omitempty"`
	// State is the one word for the origin: up, down, or not_checked when
	// no node reports a check of it (its pool has no monitor, or none has
	// run yet); not_checked counts as up for steering.
	State  string      `json:"state"`
	Checks []NodeCheck `json:"checks"`
	// Monitors, for a pool with a monitor group, is what each monitor of
	// the group sees of the origin across the nodes, in group order.
	Monitors []MonitorView `json:"monitors,omitempty"`
	// Feeds are the words fed in for the origin, one per feed monitor
	// fed, live or expired (until pruned).
	Feeds []FeedView `json:"feeds,omitempty"`
	// Load is what its feeds report now, as steering counts it (the
	// highest live load of a deciding feed monitor); absent when none.
	Load *float64 `json:"load,omitempty"`
}

// MonitorView is what one monitor of a pool's group sees of an origin,
// over the nodes that report it.
type MonitorView struct {
	Monitor        string `json:"monitor"`
	MustBeHealthy  bool   `json:"must_be_healthy"`
	MonitoringOnly bool   `json:"monitoring_only"`
	// State is up when every reporting node sees the origin up, down when
	// every one sees it down, mixed otherwise, not_checked when none
	// reports the monitor yet.
	State     string `json:"state"`
	NodesUp   int    `json:"nodes_up"`
	NodesDown int    `json:"nodes_down"`
	// Reason is the first down node's, in node order.
	Reason string `json:"reason,omitempty"`
}

// StateMixed: some nodes see the origin up under a monitor, others down.
const StateMixed = "mixed"

// NodeMonitorCheck is one node's latest result under one monitor.
type NodeMonitorCheck struct {
	Monitor string  `json:"monitor"`
	Healthy bool    `json:"healthy"`
	Reason  string  `json:"reason,omitempty"`
	RTTMs   float64 `json:"rtt_ms"`
}

// Origin states.
const (
	StateUp         = "up"
	StateDown       = "down"
	StateNotChecked = "not_checked"
)

// NodeCheck is one node's latest result for one origin.
type NodeCheck struct {
	Node    string  `json:"node"`
	Region  string  `json:"region"`
	Healthy bool    `json:"healthy"`
	Reason  string  `json:"reason,omitempty"`
	RTTMs   float64 `json:"rtt_ms"`
	// CheckedAt is when the node last vouched for the result: its latest
	// heartbeat, which renews every result the node still lists.
	CheckedAt time.Time `json:"checked_at"`
	// AgeSeconds is how old the result is; a stale one no longer counts.
	AgeSeconds float64 `json:"age_seconds"`
	// PublishedAgeSeconds is how old the node's latest heartbeat is.
	PublishedAgeSeconds float64 `json:"published_age_seconds"`
	// Monitors, for a pool with a monitor group, is what each monitor
	// sees on this node; Healthy is the group's rule applied to them.
	Monitors []NodeMonitorCheck `json:"monitors,omitempty"`
}

func (s *server) poolHealth(w http.ResponseWriter, r *http.Request) {
	o, err := s.Store.Get(r.Context(), pools.KindPool, chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p := o.(*pools.Pool)
	views, err := s.Store.HealthViews(r.Context(), p.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if s.OwnView != nil {
		views = withOwn(views, s.OwnView(p.ID))
	}
	var agreed *pools.Health
	if s.Health != nil {
		agreed = s.Health()
	}
	words, err := s.Store.Feeds(r.Context(), p.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := buildPoolHealth(p, views, agreed, s.Now())
	for _, fw := range words {
		for i := range out.Origins {
			if out.Origins[i].Name == fw.Origin {
				out.Origins[i].Feeds = append(out.Origins[i].Feeds, s.feedView(fw))
			}
		}
	}
	writeJSON(w, http.StatusOK, item{Result: out})
}

// withOwn is views with own in place of the store's copy of its node.
func withOwn(views []pools.NodeHealth, own pools.NodeHealth) []pools.NodeHealth {
	out := make([]pools.NodeHealth, 0, len(views)+1)
	for _, v := range views {
		if v.Node != own.Node {
			out = append(out, v)
		}
	}
	return append(out, own)
}

func buildPoolHealth(p *pools.Pool, views []pools.NodeHealth, agreed *pools.Health, now time.Time) PoolHealth {
	out := PoolHealth{
		Pool: p.ID, Name: p.Name, Enabled: p.Enabled, Monitor: p.Monitor, Monitors: p.Monitors,
		MinimumOrigins: p.MinimumOrigins, Origins: make([]OriginHealth, len(p.Origins)),
	}
	index := make(map[string]int, len(p.Origins))
	for i, og := range p.Origins {
		index[og.Name] = i
		out.Origins[i] = OriginHealth{
			Name: og.Name, Address: og.Address, Enabled: og.Enabled, Weight: og.Weight,
			Zone: og.Zone, Checks: []NodeCheck{},
		}
	}
	// Views are sorted so that the output is stable between requests.
	views = append([]pools.NodeHealth(nil), views...)
	sort.Slice(views, func(i, j int) bool {
		if views[i].Region != views[j].Region {
			return views[i].Region < views[j].Region
		}
		return views[i].Node < views[j].Node
	})
	for _, v := range views {
		for _, st := range v.Origins {
			i, ok := index[st.Origin]
			if st.Pool != p.ID || !ok {
				continue
			}
			out.Origins[i].Checks = append(out.Origins[i].Checks, NodeCheck{
				Node: v.Node, Region: v.Region, Healthy: st.Healthy, Reason: st.Reason,
				RTTMs: ms(st.RTT), CheckedAt: st.CheckedAt,
				AgeSeconds:          now.Sub(st.CheckedAt).Seconds(),
				PublishedAgeSeconds: now.Sub(v.Published).Seconds(),
				Monitors:            nodeMonitors(st.Monitors),
			})
		}
	}
	for i := range out.Origins {
		out.Origins[i].State = StateUp
		if !p.Checked() || len(out.Origins[i].Checks) == 0 {
			out.Origins[i].State = StateNotChecked
		}
		out.Origins[i].Monitors = monitorViews(p.Monitors, out.Origins[i].Checks)
	}
	if agreed == nil {
		return out
	}
	healthy := 0
	ph := agreed.Pool(p.ID)
	if ph == nil {
		ph = &pools.PoolHealth{}
	}
	for i, og := range p.Origins {
		h, known := ph.Origins[og.Name]
		ok := !known || h.Healthy
		out.Origins[i].Healthy = &ok
		if known && !h.Healthy {
			out.Origins[i].Reason = h.Reason
			out.Origins[i].State = StateDown
		}
		if known && h.Healthy {
			out.Origins[i].Note = h.Note
		}
		if l, ok := ph.Load[og.Name]; ok {
			out.Origins[i].Load = &l
		}
		if ok && og.Enabled && og.Weight > 0 {
			healthy++
		}
	}
	// Without a monitor no node reports, so every origin counts as healthy
	// and only weights and enabled flags decide.
	poolOK := healthy >= p.MinimumOrigins
	out.Healthy = &poolOK
	for region, d := range ph.RTT {
		if out.RTTMs == nil {
			out.RTTMs = map[string]float64{}
		}
		out.RTTMs[region] = ms(d)
	}
	return out
}

func nodeMonitors(ss []pools.MonitorState) []NodeMonitorCheck {
	if len(ss) == 0 {
		return nil
	}
	out := make([]NodeMonitorCheck, len(ss))
	for i, s := range ss {
		out[i] = NodeMonitorCheck{Monitor: s.Monitor, Healthy: s.Healthy, Reason: s.Reason, RTTMs: ms(s.RTT)}
	}
	return out
}

// monitorViews sums up each monitor of group over the nodes' checks (in
// node order); nil without a group.
func monitorViews(group []pools.PoolMonitor, checks []NodeCheck) []MonitorView {
	if len(group) == 0 {
		return nil
	}
	out := make([]MonitorView, len(group))
	for i, g := range group {
		mv := MonitorView{Monitor: g.Monitor, MustBeHealthy: g.MustBeHealthy, MonitoringOnly: g.MonitoringOnly}
		for _, c := range checks {
			for _, m := range c.Monitors {
				switch {
				case m.Monitor != g.Monitor:
				case m.Healthy:
					mv.NodesUp++
				default:
					mv.NodesDown++
					if mv.Reason == "" {
						mv.Reason = m.Reason
					}
				}
			}
		}
		switch {
		case mv.NodesUp+mv.NodesDown == 0:
			mv.State = StateNotChecked
		case mv.NodesDown == 0:
			mv.State = StateUp
		case mv.NodesUp == 0:
			mv.State = StateDown
		default:
			mv.State = StateMixed
		}
		out[i] = mv
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
