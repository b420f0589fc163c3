package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/glb-dns/glb/pools"
)

const rolloutsUsage = `usage:
  glbctl rollouts [list] [--status running,paused,...] [-o table|json|yaml]
  glbctl rollouts show ID [-o table|json|yaml]
  glbctl rollouts (pause|resume|abort) ID [--reason TEXT]`

// runRollouts lists, shows, pauses, resumes and aborts staged rollouts.
func runRollouts(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	sub := "list"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	switch sub {
	case "list":
		c, fs := newCommand("rollouts list", env, stderr, "table", "json", "yaml")
		status := fs.String("status", "", "only these states, comma-separated: "+strings.Join(pools.RolloutStates, ", "))
		if _, cl, err := commandArgs(fs, args, c, 0, 0, rolloutsUsage); err != nil {
			return usageError(stderr, err)
		} else {
			return listByStatus(ctx, cl, pools.KindRollout, *status, c.output, stdout, stderr, printRollouts)
		}
	case "show", pools.RolloutPause, pools.RolloutResume, pools.RolloutAbort:
		return rolloutCall(ctx, sub, args, env, stdout, stderr)
	}
	return usageError(stderr, fmt.Errorf("unknown rollouts command %q\n%s", sub, rolloutsUsage))
}

// rolloutCall runs "rollouts show ID" (a GET) or an event on rollout ID
// (a POST to its path and the event's name, with the reason given).
func rolloutCall(ctx context.Context, sub string, args []string, env func(string) string, stdout, stderr io.Writer) int {
	c, fs := newCommand("rollouts "+sub, env, stderr, "table", "json", "yaml")
	reason := ""
	if sub != "show" {
		fs.StringVar(&reason, "reason", "", "why, recorded with the event")
	}
	pos, cl, err := commandArgs(fs, args, c, 1, 1, rolloutsUsage)
	if err != nil {
		return usageError(stderr, err)
	}
	method, path, body := http.MethodGet, objectPath(pools.KindRollout, pos[0]), []byte(nil)
	if sub != "show" {
		method, path = http.MethodPost, path+"/"+sub
		body, _ = json.Marshal(map[string]string{"reason": reason})
	}
	b, _, err := cl.do(ctx, method, path, body, "")
	return printAnswer(b, err, c.output, stdout, stderr, "rollout", func(w io.Writer, r pools.Rollout) {
		printRollouts(w, []pools.Rollout{r})
	})
}

// printRollouts shows each rollout's progress: the step in force of how
// many, how far the weights (or the share of the new order) are, and the
// weights or the default pool order from and to.
func printRollouts(w io.Writer, list []pools.Rollout) {
	t := newTable(w, "ID", "STATUS", "TARGET", "STEP", "PERCENT", "NEXT STEP", "CHANGE", "REASON")
	for _, r := range list {
		step, pct, next := "", "", ""
		if r.CurrentStep != nil {
			step = fmt.Sprintf("%d/%d", min(*r.CurrentStep+1, len(r.Steps)), len(r.Steps))
		}
		if r.Percent != nil {
			pct = fmt.Sprint(*r.Percent) + " %"
		}
		if r.NextStepAt != nil {
			next = r.NextStepAt.Format("2006-01-02 15:04:05Z07:00")
		}
		var ws []string
		for name, to := range r.Weights {
			ws = append(ws, fmt.Sprintf("%s %v→%v", name, r.From[name], to))
		}
		k, id := r.Target()
		if r.LoadBalancer != "" {
			ws = append(ws, fmt.Sprintf("default_pools %v→%v", r.FromDefaultPools, r.DefaultPools))
		}
		reason := r.Reason
		if r.EndReason != "" {
			reason += " (" + r.EndReason + ")"
		}
		t.row(r.ID, r.Status, string(k)+"/"+id, step, pct, next, strings.Join(slices.Sorted(slices.Values(ws)), ", "), reason)
	}
	t.flush()
}
