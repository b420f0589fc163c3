package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/glb-dns/glb/pools"
)

const shiftUsage = `usage:
  glbctl shift start (--pool ID | --origin POOL/ORIGIN | --zone LABEL) --reason TEXT
                     (--duration 2h | --expires-at TIME) [--starts-at TIME] [--lb ID]... [--override]
  glbctl shift end ID
  glbctl shift list [--status active,scheduled,ended,expired] [-o table|json|yaml]`

// runShift starts, ends and lists shifts: traffic taken away from a
// pool, an origin or a zone until an expiry.
func runShift(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return usageError(stderr, errors.New(shiftUsage))
	}
	switch args[0] {
	case "start":
		return shiftStart(ctx, args[1:], env, stdout, stderr)
	case "end":
		return shiftEnd(ctx, args[1:], env, stdout, stderr)
	case "list":
		return shiftList(ctx, args[1:], env, stdout, stderr)
	}
	return usageError(stderr, fmt.Errorf("unknown shift command %q\n%s", args[0], shiftUsage))
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func shiftStart(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	c, fs := newCommand("shift start", env, stderr, "table", "json", "yaml")
	var sh pools.Shift
	fs.StringVar(&sh.Target.Pool, "pool", "", "shift this pool (id or name) away")
	fs.StringVar(&sh.Target.Origin, "origin", "", "shift this origin (pool id or name/origin name) away")
	fs.StringVar(&sh.Target.Zone, "zone", "", "shift the origins with this zone label away, in every pool")
	fs.StringVar(&sh.Reason, "reason", "", "why (required; the audit log and console show it)")
	fs.StringVar(&sh.Duration, "duration", "", "how long: 90s, 2h, 3d (at most 7d)")
	var lbs listFlag
	fs.Var(&lbs, "lb", "only for this load balancer (id or name); repeat for several; default every one")
	starts := fs.String("starts-at", "", "RFC 3339 start time (default now)")
	expires := fs.String("expires-at", "", "RFC 3339 expiry, instead of --duration")
	fs.BoolVar(&sh.Override, "override", false, "start it even though it breaks safety rules (admin token)")
	_, cl, err := commandArgs(fs, args, c, 0, 0, shiftUsage)
	if err != nil {
		return usageError(stderr, err)
	}
	// Names as well as ids, as the console takes them.
	for _, r := range []struct {
		k pools.Kind
		v *string
	}{{pools.KindPool, &sh.Target.Pool}} {
		if *r.v != "" {
			if *r.v, err = cl.resolve(ctx, r.k, *r.v); err != nil {
				return fail(stderr, exitFailed, err)
			}
		}
	}
	if sh.Target.Origin != "" {
		if sh.Target.Origin, err = cl.resolveOrigin(ctx, sh.Target.Origin); err != nil {
			return fail(stderr, exitFailed, err)
		}
	}
	for i, lb := range lbs {
		if lbs[i], err = cl.resolve(ctx, pools.KindLoadBalancer, lb); err != nil {
			return fail(stderr, exitFailed, err)
		}
	}
	sh.LoadBalancers = lbs
	for _, t := range []struct {
		flag string
		v    string
		to   *time.Time
	}{{"--starts-at", *starts, &sh.StartsAt}, {"--expires-at", *expires, &sh.ExpiresAt}} {
		if t.v == "" {
			continue
		}
		if *t.to, err = time.Parse(time.RFC3339, t.v); err != nil {
			return usageError(stderr, fmt.Errorf("%s %q: want an RFC 3339 time such as 2026-12-01T18:00:00Z", t.flag, t.v))
		}
	}
	body, err := shiftBody(&sh)
	if err != nil {
		return usageError(stderr, err)
	}
	b, _, err := cl.do(ctx, http.MethodPost, apiPrefix+"/shifts", body, "")
	err = overridable(err, "--override")
	return printShiftAnswer(b, err, c.output, stdout, stderr)
}

// shiftBody is the request body: only the fields given, so that the API
// fills the rest.
func shiftBody(sh *pools.Shift) ([]byte, error) {
	m := map[string]any{"target": sh.Target, "reason": sh.Reason}
	if len(sh.LoadBalancers) > 0 {
		m["load_balancers"] = sh.LoadBalancers
	}
	if sh.Duration != "" {
		m["duration"] = sh.Duration
	}
	if !sh.StartsAt.IsZero() {
		m["starts_at"] = sh.StartsAt
	}
	if !sh.ExpiresAt.IsZero() {
		m["expires_at"] = sh.ExpiresAt
	}
	if sh.Override {
		m["override"] = true
	}
	return json.Marshal(m)
}

func shiftEnd(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	c, fs := newCommand("shift end", env, stderr, "table", "json", "yaml")
	pos, cl, err := commandArgs(fs, args, c, 1, 1, "usage: glbctl shift end ID")
	if err != nil {
		return usageError(stderr, err)
	}
	b, _, err := cl.do(ctx, http.MethodDelete, apiPrefix+"/shifts/"+url.PathEscape(pos[0]), nil, "")
	return printShiftAnswer(b, err, c.output, stdout, stderr)
}

func printShiftAnswer(b []byte, err error, format string, stdout, stderr io.Writer) int {
	return printAnswer(b, err, format, stdout, stderr, "shift", func(w io.Writer, sh pools.Shift) {
		printShifts(w, []pools.Shift{sh})
	})
}

func shiftList(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	c, fs := newCommand("shift list", env, stderr, "table", "json", "yaml")
	status := fs.String("status", "", "only these states, comma-separated: scheduled, active, ended, expired")
	_, cl, err := commandArgs(fs, args, c, 0, 0, "usage: glbctl shift list [--status S]")
	if err != nil {
		return usageError(stderr, err)
	}
	return listByStatus(ctx, cl, pools.KindShift, *status, c.output, stdout, stderr, printShifts)
}

// listByStatus shows every object of kind k (shifts, rollouts), only
// those in the states status names when it is not empty.
func listByStatus[T any](ctx context.Context, cl *client, k pools.Kind, status, format string, stdout, stderr io.Writer, render func(io.Writer, []T)) int {
	q := url.Values{"per_page": {"1000"}}
	if status != "" {
		q.Set("status", status)
	}
	return showAs(ctx, cl, apiPrefix+"/"+string(k)+"?"+q.Encode(), format, stdout, stderr, string(k), render)
}

func printShifts(w io.Writer, list []pools.Shift) {
	t := newTable(w, "ID", "STATUS", "TARGET", "LOAD BALANCERS", "STARTS", "ENDS", "REASON")
	for _, sh := range list {
		lbs := "all"
		if len(sh.LoadBalancers) > 0 {
			lbs = strings.Join(sh.LoadBalancers, ",")
		}
		status := sh.Status
		if len(sh.Overridden) > 0 {
			status += " (override)"
		}
		t.row(sh.ID, status, sh.Target.String(), lbs, sh.StartsAt.Format(time.RFC3339), sh.End().Format(time.RFC3339), sh.Reason)
	}
	t.flush()
}

const safetyUsage = `usage:
  glbctl safety [now] [-o table|json|yaml]     the safety rules that no longer hold now
  glbctl safety rules [-o table|json|yaml]     the global safety rules
  glbctl safety set [--max-shifted-zones N] [--max-shifted-pools N] [--min-serving-lbs-percent P]   (admin)`

// runSafety shows the safety rules broken now, shows the global rules,
// and changes them.
func runSafety(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	verb, rest := "now", args
	if len(args) > 0 && (args[0] == "now" || args[0] == "rules" || args[0] == "set") {
		verb, rest = args[0], args[1:]
	}
	switch verb {
	case "rules":
		c, fs := newCommand("safety rules", env, stderr, "table", "json", "yaml")
		_, cl, err := commandArgs(fs, rest, c, 0, 0, safetyUsage)
		if err != nil {
			return usageError(stderr, err)
		}
		return showAs(ctx, cl, apiPrefix+"/safety/rules", c.output, stdout, stderr, "safety rules", printSafetyRules)
	case "set":
		return safetySet(ctx, rest, env, stdout, stderr)
	}
	c, fs := newCommand("safety", env, stderr, "table", "json", "yaml")
	_, cl, err := commandArgs(fs, rest, c, 0, 0, safetyUsage)
	if err != nil {
		return usageError(stderr, err)
	}
	return showAs(ctx, cl, apiPrefix+"/safety", c.output, stdout, stderr, "broken rules", func(w io.Writer, harms []pools.ShiftHarm) {
		if len(harms) == 0 {
			fmt.Fprintln(w, "Every safety rule holds.")
			return
		}
		t := newTable(w, "RULE", "LOAD BALANCER", "COUNT", "LIMIT", "MESSAGE")
		for _, h := range harms {
			t.row(h.Rule, cmp.Or(h.Name, h.LoadBalancer, "(global)"), strconv.Itoa(h.Serving), strconv.Itoa(h.Minimum), h.Message)
		}
		t.flush()
	})
}

func printSafetyRules(w io.Writer, r pools.SafetyRules) {
	off := func(n int) string {
		if n == 0 {
			return "0 (off)"
		}
		return strconv.Itoa(n)
	}
	t := newTable(w, "RULE", "VALUE")
	t.row("max_shifted_zones", off(r.MaxShiftedZones))
	t.row("max_shifted_pools", off(r.MaxShiftedPools))
	t.row("min_serving_load_balancers_percent", off(r.MinServingLoadBalancersPercent))
	t.row("revision", strconv.FormatInt(r.Revision, 10))
	t.flush()
}

// safetySet changes the rules it is given flags for and keeps the others,
// writing with If-Match on the revision it read, so that a change made
// in between is refused (412) rather than undone.
func safetySet(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	c, fs := newCommand("safety set", env, stderr, "table", "json", "yaml")
	zones := fs.Int("max-shifted-zones", -1, "at most this many zones shifted at once (0: no limit)")
	poolsMax := fs.Int("max-shifted-pools", -1, "at most this many pools shifted at once (0: no limit)")
	percent := fs.Int("min-serving-lbs-percent", -1, "at least this percentage of load balancers keep a steering pool serving (0: no limit)")
	_, cl, err := commandArgs(fs, args, c, 0, 0, safetyUsage)
	if err != nil {
		return usageError(stderr, err)
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if !given["max-shifted-zones"] && !given["max-shifted-pools"] && !given["min-serving-lbs-percent"] {
		return usageError(stderr, errors.New("safety set: give at least one rule to change\n"+safetyUsage))
	}
	b, hdr, err := cl.do(ctx, http.MethodGet, apiPrefix+"/safety/rules", nil, "")
	if err != nil {
		return fail(stderr, exitFailed, err)
	}
	var cur struct {
		Result pools.SafetyRules `json:"result"`
	}
	if err := json.Unmarshal(b, &cur); err != nil {
		fmt.Fprintln(stderr, "glbctl: decoding the safety rules:", err)
		return exitFailed
	}
	r := cur.Result
	for name, set := range map[string]struct {
		v   int
		dst *int
	}{"max-shifted-zones": {*zones, &r.MaxShiftedZones}, "max-shifted-pools": {*poolsMax, &r.MaxShiftedPools}, "min-serving-lbs-percent": {*percent, &r.MinServingLoadBalancersPercent}} {
		if given[name] {
			*set.dst = set.v
		}
	}
	body, _ := json.Marshal(map[string]int{"max_shifted_zones": r.MaxShiftedZones, "max_shifted_pools": r.MaxShiftedPools,
		"min_serving_load_balancers_percent": r.MinServingLoadBalancersPercent})
	b, _, err = cl.do(ctx, http.MethodPut, apiPrefix+"/safety/rules", body, hdr.Get("ETag"))
	return printAnswer(b, err, c.output, stdout, stderr, "safety rules", printSafetyRules)
}
