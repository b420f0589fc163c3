package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
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
		return rolloutList(ctx, args, env, stdout, stderr)
	case "show":
		c, fs := newCommand("rollouts show", env, stderr, "table", "json", "yaml")
		pos, cl, err := commandArgs(fs, args, c, 1, 1, "usage: glbctl rollouts show ID")
		if err != nil {
			return usageError(stderr, err)
		}
		b, _, err := cl.do(ctx, http.MethodGet, apiPrefix+"/rollouts/"+url.PathEscape(pos[0]), nil, "")
		return printRolloutAnswer(b, err, c.output, stdout, stderr)
	case pools.RolloutPause, pools.RolloutResume, pools.RolloutAbort:
		c, fs := newCommand("rollouts "+sub, env, stderr, "table", "json", "yaml")
		reason := fs.String("reason", "", "why, recorded with the event")
		pos, cl, err := commandArgs(fs, args, c, 1, 1, "usage: glbctl rollouts "+sub+" ID [--reason TEXT]")
		if err != nil {
			return usageError(stderr, err)
		}
		body, _ := json.Marshal(map[string]string{"reason": *reason})
		b, _, err := cl.do(ctx, http.MethodPost, apiPrefix+"/rollouts/"+url.PathEscape(pos[0])+"/"+sub, body, "")
		return printRolloutAnswer(b, err, c.output, stdout, stderr)
	}
	return usageError(stderr, fmt.Errorf("unknown rollouts command %q\n%s", sub, rolloutsUsage))
}

func rolloutList(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	c, fs := newCommand("rollouts list", env, stderr, "table", "json", "yaml")
	status := fs.String("status", "", "only these states, comma-separated: "+strings.Join(pools.RolloutStates, ", "))
	_, cl, err := commandArgs(fs, args, c, 0, 0, rolloutsUsage)
	if err != nil {
		return usageError(stderr, err)
	}
	q := url.Values{"per_page": {"1000"}}
	if *status != "" {
		q.Set("status", *status)
	}
	return showAs(ctx, cl, apiPrefix+"/rollouts?"+q.Encode(), c.output, stdout, stderr, "rollouts", printRollouts)
}

func printRolloutAnswer(b []byte, err error, format string, stdout, stderr io.Writer) int {
	return printAnswer(b, err, format, stdout, stderr, "rollout", func(w io.Writer, r pools.Rollout) {
		printRollouts(w, []pools.Rollout{r})
	})
}

// printRollouts shows each rollout's progress: the step in force of how
// many, how far the weights are, and the weights from and to.
func printRollouts(w io.Writer, list []pools.Rollout) {
	t := newTable(w, "ID", "STATUS", "POOL", "STEP", "PERCENT", "NEXT STEP", "WEIGHTS", "REASON")
	for _, r := range list {
		step, pct, next := "", "", ""
		if r.CurrentStep != nil {
			step = fmt.Sprintf("%d/%d", min(*r.CurrentStep+1, len(r.Steps)), len(r.Steps))
		}
		if r.Percent != nil {
			pct = strconv.FormatFloat(*r.Percent, 'f', -1, 64) + " %"
		}
		if r.NextStepAt != nil {
			next = r.NextStepAt.Format("2006-01-02 15:04:05Z07:00")
		}
		var ws []string
		for name, to := range r.Weights {
			ws = append(ws, fmt.Sprintf("%s %v→%v", name, r.From[name], to))
		}
		reason := r.Reason
		if r.EndReason != "" {
			reason += " (" + r.EndReason + ")"
		}
		t.row(r.ID, r.Status, r.Pool, step, pct, next, strings.Join(slices.Sorted(slices.Values(ws)), ", "), reason)
	}
	t.flush()
}

// stagedApply is apply --staged: the weight changes of pools become
// rollouts rather than writes.
type stagedApply struct {
	on       bool
	steps    string
	interval string
	reason   string
}

func (s *stagedApply) flags(fs *flag.FlagSet) {
	fs.BoolVar(&s.on, "staged", false, "change pools' origin weights through rollouts, in steps, rather than at once")
	fs.StringVar(&s.steps, "steps", "10,25,50,100", "with --staged: percentages of the way, increasing, the last 100")
	fs.StringVar(&s.interval, "step-interval", "5m", "with --staged: how long each step holds (30s, 5m, 1h)")
	fs.StringVar(&s.reason, "reason", "glbctl apply --staged", "with --staged: the rollouts' reason")
}

var weightPath = regexp.MustCompile(`^origins\[(\d+)\]\.weight$`)

// mark makes each update of p that changes a pool's origin weights and
// nothing else a rollout. An update that changes weights and more is
// refused (nothing is changed): its other fields would be written at once
// and its weights not, which no reader of the file would expect. Load
// balancers' pool order is not staged: their changes are refused too.
func (s *stagedApply) mark(p *plan) error {
	if !s.on {
		return nil
	}
	var errs []string
	for _, st := range p.steps {
		if st.act != actUpdate {
			continue
		}
		weights := map[string]float64{}
		other := []string{}
		for _, d := range st.fields {
			m := weightPath.FindStringSubmatch(d.path)
			pl, ok := st.entry.obj.(*pools.Pool)
			if m == nil || !ok {
				other = append(other, d.path)
				continue
			}
			i, _ := strconv.Atoi(m[1])
			if i < len(pl.Origins) {
				weights[pl.Origins[i].Name] = pl.Origins[i].Weight
			}
		}
		switch {
		case st.kind == pools.KindLoadBalancer && onlyPoolOrder(other):
			errs = append(errs, st.key()+": pool order cannot be staged; apply it without --staged")
		case len(weights) > 0 && len(other) > 0:
			errs = append(errs, fmt.Sprintf("%s: changes %s besides origin weights; apply those first, then the weights with --staged", st.key(), strings.Join(other, ", ")))
		case len(weights) > 0:
			st.rollout = weights
		}
	}
	if len(errs) > 0 {
		return errors.New("--staged: " + strings.Join(errs, "; ") + "\nnothing was changed")
	}
	return nil
}

func onlyPoolOrder(paths []string) bool {
	for _, p := range paths {
		if p != "default_pools" && !strings.HasPrefix(p, "region_pools") && !strings.HasPrefix(p, "country_pools") {
			return false
		}
	}
	return len(paths) > 0
}

// start begins the rollout of step st.
func (s *stagedApply) start(ctx context.Context, cl *client, st *step) (string, error) {
	var steps []float64
	for _, v := range strings.Split(s.steps, ",") {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return "", fmt.Errorf("--steps %q: want percentages such as 10,25,50,100", s.steps)
		}
		steps = append(steps, f)
	}
	body, err := json.Marshal(map[string]any{"pool": st.id, "weights": st.rollout, "steps": steps,
		"step_interval": s.interval, "reason": s.reason})
	if err != nil {
		return "", err
	}
	b, _, err := cl.do(ctx, http.MethodPost, apiPrefix+"/rollouts", body, "")
	if err != nil {
		return "", err
	}
	var out struct{ Result pools.Rollout }
	if err := json.Unmarshal(b, &out); err != nil {
		return "", fmt.Errorf("decoding the rollout: %w", err)
	}
	return out.Result.ID, nil
}
