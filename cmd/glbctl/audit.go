package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/glb-dns/glb/pools"
)

// runAudit shows the audit log, newest first: who changed what, and when
// origins went down and why.
func runAudit(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	return filteredList[pools.AuditEntry]{
		name: "audit", what: "entries", usage: "usage: glbctl audit [--kind KIND] [--id ID] [--actor NAME] [--since TIME] [--until TIME]",
		kind:   "only this kind: zones, monitors, pools, load_balancers, networks, tokens, tsig_keys, health, rollbacks",
		id:     "only this object id (pool/origin for health)",
		actor:  "only this actor (a token's name, bootstrap, anonymous, cluster)",
		path:   func([]string) string { return apiPrefix + "/audit" },
		render: printAudit,
	}.run(ctx, args, env, stdout, stderr)
}

// filteredList is a command that lists what the API filters and pages as
// it does the audit log: --kind, --id, --actor (with these usages),
// --since, --until, --page and --per-page. args is how many positional
// arguments it takes, path the list's path from them; what names the
// items listed.
type filteredList[T any] struct {
	name, what, usage string
	args              int
	kind, id, actor   string
	path              func(pos []string) string
	render            func(io.Writer, []T)
	// ids, when set, is the kind of the first positional argument: an
	// id or a name, resolved to the id.
	ids pools.Kind
}

func (l filteredList[T]) run(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	c, fs := newCommand(l.name, env, stderr, "table", "json", "yaml")
	q := url.Values{}
	for _, f := range []struct{ name, usage string }{
		{"kind", l.kind}, {"id", l.id}, {"actor", l.actor},
		{"since", l.what + " at or after this RFC 3339 time"},
		{"until", l.what + " before this RFC 3339 time"},
	} {
		fs.Func(f.name, f.usage, func(v string) error { q.Set(f.name, v); return nil })
	}
	page := fs.Int("page", 1, "page of results")
	perPage := fs.Int("per-page", pools.DefaultPerPage, fmt.Sprintf("%s per page (at most %d)", l.what, pools.MaxPerPage))
	pos, cl, err := commandArgs(fs, args, c, l.args, l.args, l.usage)
	if err != nil {
		return usageError(stderr, err)
	}
	if l.ids != "" {
		if pos[0], err = cl.resolve(ctx, l.ids, pos[0]); err != nil {
			return fail(stderr, exitFailed, err)
		}
	}
	q.Set("page", strconv.Itoa(*page))
	q.Set("per_page", strconv.Itoa(*perPage))
	return showAs(ctx, cl, l.path(pos)+"?"+q.Encode(), c.output, stdout, stderr, l.name, l.render)
}

func printAudit(w io.Writer, es []pools.AuditEntry) {
	t := newTable(w, "TIME", "ACTOR", "METHOD", "ACTION", "KIND", "ID", "REVISION", "CHANGE")
	for _, e := range es {
		rev := ""
		if e.Revision > 0 {
			rev = strconv.FormatInt(e.Revision, 10)
		}
		t.row(e.Time.Format(time.RFC3339), e.Actor, e.Method, e.Action, string(e.Kind), e.ObjectID, rev, change(e))
	}
	t.flush()
}

// change sums an entry up: the new state of an origin, or the fields an
// update changed.
func change(e pools.AuditEntry) string {
	if e.Kind == pools.KindShift {
		return shiftChange(e)
	}
	switch e.Action {
	case pools.ActionHealth:
		var h pools.HealthTransition
		if json.Unmarshal(e.After, &h) != nil {
			return ""
		}
		return upDown(h.Healthy) + ": " + h.Reason
	case pools.ActionUpdate:
		var before, after map[string]any
		if json.Unmarshal(e.Before, &before) != nil || json.Unmarshal(e.After, &after) != nil {
			return ""
		}
		var diffs []fieldDiff
		diffValues("", before, after, &diffs)
		var fields []string
		for _, d := range diffs {
			if d.path != "revision" && d.path != "modified_on" && d.path != "serial" {
				fields = append(fields, d.String())
			}
		}
		return strings.Join(fields, "; ")
	}
	return ""
}

// shiftChange sums a shift's entry up by its target and reason, which a
// reader of "ended_at: null → ..." would otherwise look up by its id.
func shiftChange(e pools.AuditEntry) string {
	var sh pools.Shift
	raw := e.After
	if len(raw) == 0 || string(raw) == "null" {
		raw = e.Before
	}
	if json.Unmarshal(raw, &sh) != nil {
		return ""
	}
	verb := map[string]string{pools.ActionCreate: "started", "start": "started", pools.ActionEnd: "ended", pools.ActionExpire: "expired",
		pools.ActionDelete: "deleted", pools.ActionUpdate: "changed"}[e.Action]
	if verb == "" {
		verb = e.Action
	}
	return fmt.Sprintf("%s shift of %s, reason %q", verb, sh.Target, sh.Reason)
}
