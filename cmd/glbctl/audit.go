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
	c, fs := newCommand("audit", env, stderr, "table", "json", "yaml")
	q := url.Values{}
	for _, f := range []struct{ name, usage string }{
		{"kind", "only this kind: zones, monitors, pools, load_balancers, networks, tokens, tsig_keys, health"},
		{"id", "only this object id (pool/origin for health)"},
		{"actor", "only this actor (a token's name, bootstrap, anonymous, cluster)"},
		{"since", "entries at or after this RFC 3339 time"},
		{"until", "entries before this RFC 3339 time"},
	} {
		fs.Func(f.name, f.usage, func(v string) error { q.Set(f.name, v); return nil })
	}
	page := fs.Int("page", 1, "page of results")
	perPage := fs.Int("per-page", 20, fmt.Sprintf("entries per page (at most %d)", pools.MaxPerPage))
	_, cl, err := commandArgs(fs, args, c, 0, 0, "usage: glbctl audit [--kind KIND] [--id ID] [--actor NAME] [--since TIME] [--until TIME]")
	if err != nil {
		return usageError(stderr, err)
	}
	q.Set("page", strconv.Itoa(*page))
	q.Set("per_page", strconv.Itoa(*perPage))
	return showAs(ctx, cl, apiPrefix+"/audit?"+q.Encode(), c.output, stdout, stderr, "audit log", func(w io.Writer, es []pools.AuditEntry) {
		printAudit(w, es)
	})
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
