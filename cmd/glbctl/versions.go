package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/pools"
)

// versionsPath is the path of a load balancer's versions.
func versionsPath(lb string) string {
	return objectPath(pools.KindLoadBalancer, lb) + "/versions"
}

// runVersions lists a load balancer's versions, newest first.
func runVersions(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	return filteredList[pools.Version]{
		name: "versions", what: "versions", args: 1,
		usage:  "usage: glbctl versions LB [--kind KIND] [--id ID] [--actor NAME] [--since TIME] [--until TIME]",
		kind:   "only versions that changed this kind: load_balancers, pools, monitors",
		id:     "only versions that changed this object",
		actor:  "only versions written by this actor",
		path:   func(pos []string) string { return versionsPath(pos[0]) },
		ids:    pools.KindLoadBalancer,
		render: printVersions,
	}.run(ctx, args, env, stdout, stderr)
}

func printVersions(w io.Writer, vs []pools.Version) {
	t := newTable(w, "VERSION", "REVISION", "TIME", "ACTOR", "METHOD", "CHANGES")
	for _, v := range vs {
		changes := describeChanges(v.Changes)
		if v.RollbackTo > 0 {
			changes = "rollback to version " + itoa(v.RollbackTo) + ": " + changes
		}
		t.row(itoa(v.Version), itoa(v.Revision), v.Time.Format(time.RFC3339), v.Actor, v.Method, changes)
	}
	t.flush()
}

func describeChanges(cs []pools.VersionChange) string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Action + " " + string(c.Kind) + "/" + c.ID
	}
	return strings.Join(out, ", ")
}

// versionFlags parses LB and --version N, the arguments of rollback and of
// diff --version.
func versionFlags(name string, args []string, env func(string) string, stderr io.Writer) (lb string, n int, cl *client, err error) {
	c, fs := newCommand(name, env, stderr)
	fs.IntVar(&n, "version", 0, "the version (glbctl versions LB lists them)")
	pos, cl, err := commandArgs(fs, args, c, 1, 1, "usage: glbctl "+name+" LB --version N")
	if err == nil && n < 1 {
		err = fmt.Errorf("%s: --version N (a positive version number) is required", name)
	}
	if err != nil {
		return "", 0, nil, err
	}
	return pos[0], n, cl, nil
}

// runRollback writes a version's objects back, in one call.
func runRollback(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	lb, n, cl, err := versionFlags("rollback", args, env, stderr)
	if err != nil {
		return usageError(stderr, err)
	}
	if lb, err = cl.resolve(ctx, pools.KindLoadBalancer, lb); err != nil {
		return fail(stderr, exitFailed, err)
	}
	b, _, err := cl.do(ctx, http.MethodPost, versionsPath(lb)+"/"+strconv.Itoa(n)+"/rollback", nil, "")
	var out struct{ Result api.RollbackResult }
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		return fail(stderr, exitFailed, err)
	}
	r := out.Result
	if len(r.Changes) == 0 {
		fmt.Fprintf(stdout, "%s already stands as at version %d: nothing written\n", lb, n)
		return exitOK
	}
	fmt.Fprintf(stdout, "%s rolled back to version %d: version %d (revision %d) %s\n", lb, n, r.Version, r.Revision, describeChanges(r.Changes))
	return exitOK
}

// runVersionDiff is diff LB --version N: what a rollback to version N
// would change, each object of the version against the one stored now.
func runVersionDiff(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	lb, n, cl, err := versionFlags("diff", args, env, stderr)
	if err != nil {
		if usageError(stderr, err) == exitOK {
			return exitOK
		}
		return exitTrouble
	}
	if lb, err = cl.resolve(ctx, pools.KindLoadBalancer, lb); err != nil {
		return fail(stderr, exitTrouble, err)
	}
	p, err := versionPlan(ctx, cl, lb, n)
	if err != nil {
		return fail(stderr, exitTrouble, err)
	}
	kept := p.kept
	p.kept = nil
	printPlan(stdout, p)
	if len(kept) > 0 {
		fmt.Fprintf(stdout, "used by %s now but not at version %d, left as they are by a rollback: %s\n", lb, n, strings.Join(kept, ", "))
	}
	if p.changes() > 0 {
		return exitDiffers
	}
	return exitOK
}

// isVersionDiff reports whether diff's arguments name --version: a
// version to compare with rather than a file.
func isVersionDiff(args []string) bool {
	return slices.ContainsFunc(args, func(a string) bool {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		return strings.HasPrefix(a, "-") && name == "version"
	})
}

// versionPlan compares version n's objects with the stored ones: an
// update for each that differs, a creation for each deleted since; the
// objects the load balancer uses now but did not at n are kept (a
// rollback leaves them).
func versionPlan(ctx context.Context, cl *client, lb string, n int) (*plan, error) {
	var v pools.VersionObjects
	if err := cl.result(ctx, versionsPath(lb)+"/"+strconv.Itoa(n), &v); err != nil {
		return nil, err
	}
	if v.LoadBalancer == nil {
		return nil, fmt.Errorf("version %d of %s is its deletion: there is nothing to compare", n, lb)
	}
	st, err := readState(ctx, cl)
	if err != nil {
		return nil, err
	}
	want := map[string]pools.Object{}
	for i := range v.Monitors {
		want[string(pools.KindMonitor)+"/"+v.Monitors[i].ID] = &v.Monitors[i]
	}
	for i := range v.Pools {
		want[string(pools.KindPool)+"/"+v.Pools[i].ID] = &v.Pools[i]
	}
	want[string(pools.KindLoadBalancer)+"/"+lb] = v.LoadBalancer
	p := &plan{}
	for _, k := range applyOrder {
		for _, key := range slices.Sorted(maps.Keys(want)) {
			o := want[key]
			if o.Kind() != k {
				continue
			}
			cur, ok := st[k][o.ObjectMeta().ID]
			if !ok {
				p.steps = append(p.steps, &step{act: actCreate, kind: k, id: o.ObjectMeta().ID})
				continue
			}
			s := &step{act: actUnchanged, kind: k, id: o.ObjectMeta().ID, rev: cur.ObjectMeta().Revision}
			if s.fields, err = diffObjects(cur, o); err != nil {
				return nil, err
			}
			if len(s.fields) > 0 {
				s.act = actUpdate
			}
			p.steps = append(p.steps, s)
		}
	}
	// p.kept lists, here, what the load balancer uses now but did not at
	// n: runVersionDiff names it in its own words.
	if cur, ok := st[pools.KindLoadBalancer][lb].(*pools.LoadBalancer); ok {
		for _, r := range cur.PoolRefs() {
			key := string(pools.KindPool) + "/" + r.Pool
			if want[key] == nil && !slices.Contains(p.kept, key) {
				p.kept = append(p.kept, key)
			}
		}
	}
	return p, nil
}
