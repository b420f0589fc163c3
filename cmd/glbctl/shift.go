package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
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
	fs.StringVar(&sh.Target.Pool, "pool", "", "shift this pool (id) away")
	fs.StringVar(&sh.Target.Origin, "origin", "", "shift this origin (pool-id/origin-name) away")
	fs.StringVar(&sh.Target.Zone, "zone", "", "shift the origins with this zone label away, in every pool")
	fs.StringVar(&sh.Reason, "reason", "", "why (required; the audit log and console show it)")
	fs.StringVar(&sh.Duration, "duration", "", "how long: 90s, 2h, 3d (at most 7d)")
	var lbs listFlag
	fs.Var(&lbs, "lb", "only for this load balancer (id); repeat for several; default every one")
	starts := fs.String("starts-at", "", "RFC 3339 start time (default now)")
	expires := fs.String("expires-at", "", "RFC 3339 expiry, instead of --duration")
	fs.BoolVar(&sh.Override, "override", false, "start it even though it breaks safety rules (admin token)")
	_, cl, err := commandArgs(fs, args, c, 0, 0, shiftUsage)
	if err != nil {
		return usageError(stderr, err)
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
	if err != nil {
		fmt.Fprintln(stderr, "glbctl:", err)
		return exitFailed
	}
	var env struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		fmt.Fprintln(stderr, "glbctl: decoding the answer:", err)
		return exitFailed
	}
	if format != "table" {
		if err := printRaw(stdout, env.Result, format); err != nil {
			fmt.Fprintln(stderr, "glbctl:", err)
			return exitFailed
		}
		return exitOK
	}
	var sh pools.Shift
	if err := json.Unmarshal(env.Result, &sh); err != nil {
		fmt.Fprintln(stderr, "glbctl: decoding the shift:", err)
		return exitFailed
	}
	printShifts(stdout, []pools.Shift{sh})
	return exitOK
}

func shiftList(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	c, fs := newCommand("shift list", env, stderr, "table", "json", "yaml")
	status := fs.String("status", "", "only these states, comma-separated: scheduled, active, ended, expired")
	_, cl, err := commandArgs(fs, args, c, 0, 0, "usage: glbctl shift list [--status S]")
	if err != nil {
		return usageError(stderr, err)
	}
	q := url.Values{"per_page": {"1000"}}
	if *status != "" {
		q.Set("status", *status)
	}
	return showAs(ctx, cl, apiPrefix+"/shifts?"+q.Encode(), c.output, stdout, stderr, "shifts", func(w io.Writer, list []pools.Shift) {
		printShifts(w, list)
	})
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
