package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/glb-dns/glb/pools"
)

const nodesUsage = `usage:
  glbctl nodes [list] [-o table|json|yaml]
  glbctl nodes show NAME [-o table|json|yaml]
  glbctl nodes drain NAME --reason TEXT [--until RFC3339] [--wait [--wait-timeout 2m]]   (admin)
  glbctl nodes undrain NAME                                                             (admin)
--wait returns once the node reports drained (its routes withdrawn and its drain grace over):
then it may be stopped.`

// runNodes shows the fleet and drains nodes (nodes.go in the API).
func runNodes(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	c, fs := newCommand("nodes", env, stderr, "table", "json", "yaml")
	reason := fs.String("reason", "", "drain: why the node is drained (required)")
	until := fs.String("until", "", "drain: when the drain lapses, RFC 3339; empty: until undrained")
	wait := fs.Bool("wait", false, "drain: return once the node reports drained")
	waitTimeout := fs.Duration("wait-timeout", 2*time.Minute, "drain --wait: give up after this long")
	pos, cl, err := commandArgs(fs, args, c, 0, -1, "")
	if err != nil {
		return usageError(stderr, err)
	}
	verb, pos := splitVerb(pos)
	switch {
	case verb == "list" && len(pos) == 0:
		return showAs(ctx, cl, apiPrefix+"/nodes", c.output, stdout, stderr, "nodes", func(w io.Writer, vs []pools.NodeView) {
			t := newTable(w, "NAME", "REGION", "STATE", "VERSION", "REVISION", "LAG", "SNAPSHOT AGE", "CHECKS", "ANSWERS/S", "BGP", "LAST SEEN")
			for _, v := range vs {
				t.row(nodeRow(v)...)
			}
			t.flush()
		})
	case verb == "show" && len(pos) == 1:
		return showAs(ctx, cl, apiPrefix+"/nodes/"+url.PathEscape(pos[0]), c.output, stdout, stderr, "node", func(w io.Writer, v pools.NodeView) {
			t := newTable(w, "NAME", "REGION", "STATE", "VERSION", "REVISION", "LAG", "SNAPSHOT AGE", "CHECKS", "ANSWERS/S", "BGP", "LAST SEEN")
			t.row(nodeRow(v)...)
			t.flush()
			fmt.Fprintf(w, "commit %s, started %s\nlisteners: udp %s, tcp %s, xdp %s\n", orDash(v.Commit), v.StartedAt.Format(time.RFC3339),
				orDash(strings.Join(v.Listeners.UDP, ",")), orDash(strings.Join(v.Listeners.TCP, ",")), orDash(strings.Join(v.Listeners.XDP, ",")))
			for _, s := range v.BGP.Sessions {
				fmt.Fprintf(w, "bgp peer %s AS%d: %s\n", s.Peer, s.ASN, s.State)
			}
			if len(v.BGP.Announced) > 0 {
				fmt.Fprintf(w, "announced: %s\n", strings.Join(v.BGP.Announced, ", "))
			}
			if v.Why != "" {
				fmt.Fprintf(w, "why: %s\n", v.Why)
			}
		})
	case verb == "drain" && len(pos) == 1:
		if strings.TrimSpace(*reason) == "" {
			return usageError(stderr, fmt.Errorf("nodes drain: --reason is required\n%s", nodesUsage))
		}
		req := map[string]any{"reason": *reason}
		if *until != "" {
			at, err := time.Parse(time.RFC3339, *until)
			if err != nil {
				return usageError(stderr, fmt.Errorf("--until %q: not an RFC 3339 time (2027-01-01T00:00:00Z)", *until))
			}
			req["until"] = at
		}
		body, _ := json.Marshal(req)
		path := apiPrefix + "/nodes/" + url.PathEscape(pos[0])
		if _, _, err := cl.do(ctx, http.MethodPost, path+"/drain", body, ""); err != nil {
			return fail(stderr, exitFailed, err)
		}
		fmt.Fprintf(stdout, "node %s draining: %s\n", pos[0], *reason)
		if !*wait {
			return exitOK
		}
		if err := waitDrained(ctx, cl, path, *waitTimeout); err != nil {
			return fail(stderr, exitFailed, err)
		}
		fmt.Fprintf(stdout, "node %s drained: it may be stopped\n", pos[0])
		return exitOK
	case verb == "undrain" && len(pos) == 1:
		if _, _, err := cl.do(ctx, http.MethodDelete, apiPrefix+"/nodes/"+url.PathEscape(pos[0])+"/drain", nil, ""); err != nil {
			return fail(stderr, exitFailed, err)
		}
		fmt.Fprintf(stdout, "node %s undrained: it announces and serves again\n", pos[0])
		return exitOK
	}
	return usageError(stderr, fmt.Errorf("%s", nodesUsage))
}

// waitDrained polls the node every half second until it reports drained.
func waitDrained(ctx context.Context, cl *client, path string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	state := ""
	for {
		b, _, err := cl.do(ctx, http.MethodGet, path, nil, "")
		if err == nil {
			var out struct {
				Result pools.NodeView `json:"result"`
			}
			if err := json.Unmarshal(b, &out); err != nil {
				return fmt.Errorf("decoding the node: %w", err)
			}
			state = out.Result.State
			switch state {
			case pools.NodeDrained:
				return nil
			case pools.NodeGone, pools.NodeServing:
				return fmt.Errorf("waiting for the drain: the node is %s (%s)", state, out.Result.Why)
			}
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("the node was not drained within %v (last state: %s)", timeout, orDash(state))
			}
			return ctx.Err()
		case <-tick.C:
		}
	}
}

func nodeRow(v pools.NodeView) []string {
	age := "-"
	if v.SnapshotAge != nil {
		age = (time.Duration(*v.SnapshotAge * float64(time.Second))).Round(time.Second).String()
	}
	lag := "0"
	if v.Lag.Revisions > 0 {
		lag = fmt.Sprintf("%d rev, %s", v.Lag.Revisions, time.Duration(v.Lag.Seconds*float64(time.Second)).Round(time.Second))
	}
	bgp := "-"
	if n := len(v.BGP.Sessions); n > 0 {
		up := 0
		for _, s := range v.BGP.Sessions {
			if s.State == "established" {
				up++
			}
		}
		bgp = fmt.Sprintf("%d/%d up, %d announced", up, n, len(v.BGP.Announced))
	}
	state := v.State
	if v.Drain != nil {
		state += " (" + v.Drain.Reason + ")"
	}
	return []string{v.Name, orDash(v.Region), state, v.Version, strconv.FormatInt(v.Revision, 10), lag, age,
		fmt.Sprintf("%d/%d failing", v.Checks.Failing, v.Checks.Origins), strconv.FormatFloat(v.AnswersPerSecond, 'f', 1, 64), bgp,
		v.LastSeen.Format(time.RFC3339)}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
