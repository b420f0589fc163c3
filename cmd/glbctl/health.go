package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/pools"
)

func runHealth(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	c, fs := newCommand("health", env, stderr, "table", "json")
	pos, cl, err := commandArgs(fs, args, c, 1, 1, "usage: glbctl health POOL")
	if err != nil {
		return usageError(stderr, err)
	}
	pool, err := cl.resolve(ctx, pools.KindPool, pos[0])
	if err != nil {
		return fail(stderr, exitFailed, err)
	}
	return showAs(ctx, cl, objectPath(pools.KindPool, pool)+"/health", c.output, stdout, stderr, "health", func(w io.Writer, h api.PoolHealth) {
		printHealth(w, &h)
	})
}

// printHealth shows the pool's agreed state, then one row per origin and
// node: what every node saw beside what they agree on.
func printHealth(w io.Writer, h *api.PoolHealth) {
	what := "monitor " + orNone(h.Monitor)
	if len(h.Monitors) > 0 {
		what = "monitors " + monitorsOf("", h.Monitors)
	}
	fmt.Fprintf(w, "pool %s (%s): %s, enabled %s, %s, minimum %d origin(s)\n",
		h.Pool, h.Name, agreed(h.Healthy), yesNo(h.Enabled), what, h.MinimumOrigins)
	if len(h.RTTMs) > 0 {
		var parts []string
		for _, r := range slices.Sorted(maps.Keys(h.RTTMs)) {
			parts = append(parts, fmt.Sprintf("%s %.1f ms", r, h.RTTMs[r]))
		}
		fmt.Fprintf(w, "smoothed RTT by region: %s\n", strings.Join(parts, ", "))
	}
	fmt.Fprintln(w)
	t := newTable(w, "ORIGIN", "ADDRESS", "ENABLED", "WEIGHT", "ZONE", "AGREED", "NODE", "REGION", "NODE SAYS", "RTT_MS", "AGE_S", "REASON")
	for _, o := range h.Origins {
		state := agreed(o.Healthy)
		if o.State == api.StateNotChecked {
			state = "not checked"
		}
		if len(o.Checks) == 0 {
			t.row(o.Name, shownAddress(o.Address), yesNo(o.Enabled), num(o.Weight), o.Zone, state, "", "", "not checked", "", "", o.Reason)
			continue
		}
		for _, c := range o.Checks {
			reason := c.Reason
			if reason == "" {
				reason = o.Reason
			}
			t.row(o.Name, shownAddress(o.Address), yesNo(o.Enabled), num(o.Weight), o.Zone, state, c.Node, c.Region,
				upDown(c.Healthy), fmt.Sprintf("%.1f", c.RTTMs), fmt.Sprintf("%.0f", c.AgeSeconds), reason)
		}
	}
	t.flush()
	printMonitorViews(w, h)
	printOriginFeeds(w, h)
}

// printOriginFeeds shows the words fed in for the pool's origins, and the
// load steering counts for each, when there are any.
func printOriginFeeds(w io.Writer, h *api.PoolHealth) {
	var ws []api.FeedView
	var loads []string
	for _, o := range h.Origins {
		ws = append(ws, o.Feeds...)
		if o.Load != nil {
			loads = append(loads, o.Name+" "+num(*o.Load))
		}
	}
	if len(ws) == 0 && len(loads) == 0 {
		return
	}
	fmt.Fprintln(w)
	if len(loads) > 0 {
		fmt.Fprintf(w, "load fed in, as steering counts it: %s\n", strings.Join(loads, ", "))
	}
	printFeeds(w, ws)
}

// printMonitorViews shows, for a pool with a monitor group, what each
// monitor sees of each origin over the nodes, one row per origin and
// monitor.
func printMonitorViews(w io.Writer, h *api.PoolHealth) {
	if len(h.Monitors) == 0 {
		return
	}
	fmt.Fprintln(w)
	t := newTable(w, "ORIGIN", "MONITOR", "ROLE", "SEES", "NODES_UP", "NODES_DOWN", "REASON")
	for _, o := range h.Origins {
		for _, m := range o.Monitors {
			sees := strings.ReplaceAll(m.State, "_", " ")
			t.row(o.Name, m.Monitor, role(m.MustBeHealthy, m.MonitoringOnly), sees, itoa(m.NodesUp), itoa(m.NodesDown), m.Reason)
		}
	}
	t.flush()
}

func role(must, only bool) string {
	switch {
	case must:
		return "must be healthy"
	case only:
		return "monitoring only"
	}
	return "one of the others"
}

// monitorsOf names a pool's monitors: the group's, with their role
// ("http,tcp(must)"), else the single monitor.
func monitorsOf(single string, group []pools.PoolMonitor) string {
	if len(group) == 0 {
		return single
	}
	parts := make([]string, len(group))
	for i, m := range group {
		parts[i] = m.Monitor
		switch {
		case m.MustBeHealthy:
			parts[i] += "(must)"
		case m.MonitoringOnly:
			parts[i] += "(only)"
		}
	}
	return strings.Join(parts, ",")
}

func agreed(b *bool) string {
	if b == nil {
		return "no agreed view"
	}
	return upDown(*b)
}

func upDown(b bool) string {
	if b {
		return "healthy"
	}
	return "unhealthy"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
