package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/glb-dns/glb/pools"
)

func runApply(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	var dryRun bool
	var staged stagedApply
	a, cl, err := parseFileArgs("apply", args, env, stderr,
		"delete objects the file does not name",
		"a plan written by glbctl diff --plan: refuse if the server changed since",
		func(fs *flag.FlagSet) {
			fs.BoolVar(&dryRun, "dry-run", false, "print what would be done; change nothing")
			staged.flags(fs)
		})
	if err != nil {
		return usageError(stderr, err)
	}
	f, p, err := load(ctx, cl, a.file, a.prune)
	if err != nil {
		fmt.Fprintf(stderr, "glbctl: %v\nnothing was changed\n", err)
		return exitFailed
	}
	if a.plan != "" {
		sp, err := readSavedPlan(a.plan)
		if err != nil {
			return fail(stderr, exitFailed, err)
		}
		moved, err := sp.check(cl.base, f, p)
		if err != nil {
			return fail(stderr, exitFailed, err)
		}
		if len(moved) > 0 {
			return fail(stderr, exitFailed, &staleError{moved: moved})
		}
	}
	if err := staged.mark(p); err != nil {
		return fail(stderr, exitFailed, err)
	}
	if dryRun {
		printPlan(stdout, p)
		fmt.Fprintln(stdout, "dry run: nothing was changed")
		return exitOK
	}
	if err := execute(ctx, cl, f, p, &staged, stdout); err != nil {
		return fail(stderr, exitFailed, err)
	}
	return exitOK
}

// load reads the file and the server's state and compares them.
func load(ctx context.Context, cl *client, file string, prune bool) (*configFile, *plan, error) {
	f, err := readConfigFile(file, os.Stdin)
	if err != nil {
		return nil, nil, err
	}
	st, err := readState(ctx, cl)
	if err != nil {
		return nil, nil, err
	}
	p, err := makePlan(f, st, prune)
	if err != nil {
		return nil, nil, err
	}
	return f, p, nil
}

// execute carries the plan out step by step and stops at the first
// failure: later steps may depend on it (a load balancer on its pool).
// Every update and deletion is conditional on the revision the plan saw,
// so an edit made through the API meanwhile answers 412 and is kept.
func execute(ctx context.Context, cl *client, f *configFile, p *plan, staged *stagedApply, out io.Writer) error {
	var created, updated, deleted, unchanged, staging int
	for _, s := range p.steps {
		var err error
		switch s.act {
		case actUnchanged:
			unchanged++
			continue
		case actCreate:
			var rev int64
			rev, err = write(ctx, cl, http.MethodPost, apiPrefix+"/"+string(s.kind), s.entry.doc, "")
			if err == nil {
				created++
				fmt.Fprintf(out, "created %s (revision %d)\n", s.key(), rev)
			}
		case actUpdate:
			if s.staged() {
				var id string
				if id, err = staged.start(ctx, cl, s); err == nil {
					staging++
					what := fmt.Sprintf("weights %v", s.rollout)
					if s.order != nil {
						what = fmt.Sprintf("default_pools %v", s.order)
					}
					fmt.Fprintf(out, "rollout %s started for %s: %s in steps %s every %s%s (glbctl rollouts show %s)\n",
						id, s.key(), what, staged.steps, staged.interval, staged.guardText(), id)
				}
				break
			}
			var rev int64
			rev, err = write(ctx, cl, http.MethodPut, objectPath(s.kind, s.id), s.entry.doc, etag(s.rev))
			if err == nil {
				updated++
				fmt.Fprintf(out, "updated %s (revision %d → %d)\n", s.key(), s.rev, rev)
			}
		case actDelete:
			_, _, err = cl.do(ctx, http.MethodDelete, objectPath(s.kind, s.id), nil, etag(s.rev))
			if err == nil {
				deleted++
				fmt.Fprintf(out, "deleted %s\n", s.key())
			}
		}
		if err != nil {
			return stepError(f, s, err)
		}
	}
	fmt.Fprintf(out, "%d created, %d updated, %d deleted, %d unchanged", created, updated, deleted, unchanged)
	if staging > 0 {
		fmt.Fprintf(out, ", %d rollouts started", staging)
	}
	fmt.Fprintln(out)
	return nil
}

// write sends an object and returns the revision stored.
func write(ctx context.Context, cl *client, method, path string, doc map[string]any, ifMatch string) (int64, error) {
	body, err := json.Marshal(doc)
	if err != nil {
		return 0, fmt.Errorf("encode %s: %w", path, err)
	}
	b, _, err := cl.do(ctx, method, path, body, ifMatch)
	if err != nil {
		return 0, err
	}
	var env struct {
		Result struct {
			Revision int64 `json:"revision"`
		} `json:"result"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(b), &env); err != nil {
		return 0, fmt.Errorf("%s %s: decoding the answer: %w", method, path, err)
	}
	return env.Result.Revision, nil
}

// stepError explains a failed step in the file's terms: a 412 is an edit
// made through the API since the plan, a 400 names lines of the file.
func stepError(f *configFile, s *step, err error) error {
	var ae *apiError
	if !errors.As(err, &ae) {
		return fmt.Errorf("%s: %w", s.key(), err)
	}
	switch {
	case ae.Status == http.StatusPreconditionFailed:
		return fmt.Errorf("%s changed on the server after glbctl read it at revision %d: not overwritten; "+
			"stopped (run glbctl diff again)\n  %w", s.key(), s.rev, err)
	case ae.Status == http.StatusConflict && s.act == actDelete:
		return fmt.Errorf("refusing to prune %s: something still refers to it; stopped\n  %w", s.key(), err)
	case ae.Status == http.StatusBadRequest && s.entry != nil && len(ae.Problem.Errors) > 0:
		errs := &fileErrors{name: f.name}
		for _, fe := range ae.Problem.Errors {
			errs.add(f.lines, within(s.entry.path, fe.Path), "%s", fe.Message)
		}
		return fmt.Errorf("%s: the server refused it (%d %s); stopped\n%w", s.key(), ae.Status, ae.Problem.Detail, errs)
	}
	return fmt.Errorf("%s: %w", s.key(), err)
}

// stagedApply is apply --staged: the weight changes of pools and the
// default pool order changes of load balancers become rollouts rather
// than writes.
type stagedApply struct {
	on       bool
	steps    string
	interval string
	reason   string
	override bool
	guards   pools.RolloutGuards
	// percents are steps parsed.
	percents []float64
}

func (s *stagedApply) flags(fs *flag.FlagSet) {
	fs.BoolVar(&s.on, "staged", false, "change pools' origin weights and load balancers' default pool order through rollouts, in steps, rather than at once")
	fs.StringVar(&s.steps, "steps", "10,25,50,100", "with --staged: percentages of the way, increasing, the last 100")
	fs.StringVar(&s.interval, "step-interval", "5m", "with --staged: how long each step holds (30s, 5m, 1h)")
	fs.StringVar(&s.reason, "reason", "glbctl apply --staged", "with --staged: the rollouts' reason")
	fs.BoolVar(&s.override, "override", false, "with --staged: start the rollouts even though they break safety rules (admin token)")
	fs.StringVar(&s.guards.Webhook, "webhook", "", "with --staged: a URL POSTed each rollout at every step; an answer other than 2xx rolls it back")
	fs.StringVar(&s.guards.Query, "query", "", "with --staged: a Prometheus instant query asked at every step; an empty result or a value not above 0 rolls the rollout back (needs --prometheus)")
	fs.StringVar(&s.guards.Prometheus, "prometheus", "", "with --staged --query: the Prometheus base URL the query is asked of")
}

// guardText names the guards given besides the health ones, "" for none.
func (s *stagedApply) guardText() string {
	var g []string
	if s.guards.Webhook != "" {
		g = append(g, "webhook "+s.guards.Webhook)
	}
	if s.guards.Query != "" {
		g = append(g, fmt.Sprintf("query %q on %s", s.guards.Query, s.guards.Prometheus))
	}
	if len(g) == 0 {
		return ""
	}
	return ", guarded by " + strings.Join(g, " and ")
}

var weightPath = regexp.MustCompile(`^origins\[(\d+)\]\.weight$`)

// mark makes each update of p that changes a pool's origin weights and
// nothing else a rollout, and each that changes a load balancer's
// default_pools and nothing else. An update that changes weights (or
// default_pools) and more is refused (nothing is changed): its other
// fields would be written at once and the rest not, which no reader of
// the file would expect. region_pools and country_pools are not staged:
// their changes are refused too.
func (s *stagedApply) mark(p *plan) error {
	if !s.on {
		return nil
	}
	s.percents = nil
	for _, v := range strings.Split(s.steps, ",") {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return fmt.Errorf("--steps %q: want percentages such as 10,25,50,100", s.steps)
		}
		s.percents = append(s.percents, f)
	}
	staging := fmt.Sprintf("steps %s %% every %s%s", s.steps, s.interval, s.guardText())
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
		lb, isLB := st.entry.obj.(*pools.LoadBalancer)
		switch {
		case isLB && len(other) == 1 && other[0] == "default_pools":
			st.order, st.staging = lb.DefaultPools, staging+": default_pools "+orderChange(st)
		case isLB && slices.Contains(other, "default_pools") && onlyPoolOrder(other):
			errs = append(errs, st.key()+": region_pools and country_pools cannot be staged (default_pools can); apply them without --staged")
		case isLB && slices.Contains(other, "default_pools"):
			errs = append(errs, fmt.Sprintf("%s: changes %s besides default_pools; apply those first, then the order with --staged", st.key(), strings.Join(slices.DeleteFunc(other, func(p string) bool { return p == "default_pools" }), ", ")))
		case isLB && onlyPoolOrder(other):
			errs = append(errs, st.key()+": region_pools and country_pools cannot be staged (default_pools can); apply them without --staged")
		case len(weights) > 0 && len(other) > 0:
			errs = append(errs, fmt.Sprintf("%s: changes %s besides origin weights; apply those first, then the weights with --staged", st.key(), strings.Join(other, ", ")))
		case len(weights) > 0:
			st.rollout, st.staging = weights, staging+": weights "+weightChange(st)
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

// orderChange is a load balancer step's default_pools, old → new.
func orderChange(st *step) string {
	for _, d := range st.fields {
		if d.path == "default_pools" {
			return fmt.Sprintf("%v → %v", d.from, d.to)
		}
	}
	return ""
}

// weightChange is a pool step's weight changes, "b 0.5→0.1, ...".
func weightChange(st *step) string {
	var out []string
	pl := st.entry.obj.(*pools.Pool)
	for _, d := range st.fields {
		if m := weightPath.FindStringSubmatch(d.path); m != nil {
			i, _ := strconv.Atoi(m[1])
			if i < len(pl.Origins) {
				out = append(out, fmt.Sprintf("%s %v→%v", pl.Origins[i].Name, d.from, d.to))
			}
		}
	}
	return strings.Join(out, ", ")
}

// start begins the rollout of step st.
func (s *stagedApply) start(ctx context.Context, cl *client, st *step) (string, error) {
	doc := map[string]any{"pool": st.id, "weights": st.rollout, "steps": s.percents, "step_interval": s.interval, "reason": s.reason, "guards": s.guards}
	if st.order != nil {
		doc = map[string]any{"load_balancer": st.id, "default_pools": st.order, "steps": s.percents, "step_interval": s.interval, "reason": s.reason, "guards": s.guards}
	}
	if s.override {
		doc["override"] = true
	}
	var ro pools.Rollout
	if err := cl.post(ctx, apiPrefix+"/rollouts", doc, &ro); err != nil {
		return "", overridable(err, "--override")
	}
	return ro.ID, nil
}
