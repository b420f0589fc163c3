package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/pools"
)

func runDiff(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	if isVersionDiff(args) {
		return runVersionDiff(ctx, args, env, stdout, stderr) // versions.go
	}
	a, cl, err := parseFileArgs("diff", args, env, stderr,
		"also show the objects apply --prune would delete",
		"write the revisions this diff saw here, for apply --plan", nil)
	if err != nil {
		if usageError(stderr, err) == exitOK {
			return exitOK
		}
		return exitTrouble
	}
	f, p, err := load(ctx, cl, a.file, a.prune)
	if err != nil {
		return fail(stderr, exitTrouble, err)
	}
	if a.plan != "" {
		if err := writeSavedPlan(a.plan, cl.base, f, p); err != nil {
			return fail(stderr, exitTrouble, err)
		}
	}
	printPlan(stdout, p)
	if err := printImpact(ctx, stdout, cl, p); err != nil {
		fmt.Fprintln(stderr, "glbctl: the real-traffic preview:", err)
		return exitTrouble
	}
	if p.changes() > 0 {
		return exitDiffers
	}
	return exitOK
}

// printPlan prints each step that writes, with its fields, then a summary.
func printPlan(w io.Writer, p *plan) {
	var create, update, del, same, staged int
	for _, s := range p.steps {
		switch s.act {
		case actUnchanged:
			same++
			continue
		case actCreate:
			create++
		case actUpdate:
			if s.staged() {
				staged++
				break
			}
			update++
		case actDelete:
			del++
		}
		fmt.Fprintln(w, describe(s))
		for _, d := range s.fields {
			fmt.Fprintln(w, "    "+d.String())
		}
	}
	fmt.Fprintf(w, "%d to create, %d to update, %d to delete, %d unchanged", create, update, del, same)
	if staged > 0 {
		fmt.Fprintf(w, ", %d to start as rollouts", staged)
	}
	fmt.Fprintln(w)
	if len(p.kept) > 0 {
		fmt.Fprintf(w, "%d on the server but not in the file, kept (--prune deletes them): %s\n", len(p.kept), strings.Join(p.kept, ", "))
	}
}

// printImpact says, for each load balancer on the server whose own
// update or whose pools' updates the plan holds, what the file would do
// to its real traffic: the server's real-traffic preview of the file's
// objects as unsaved edits (merge patches of the stored objects), the
// last hour of queries the nodes sampled. A load balancer with nothing
// sampled says so; the diff itself stands either way.
func printImpact(ctx context.Context, w io.Writer, cl *client, p *plan) error {
	changed := map[pools.Kind]map[string]map[string]any{pools.KindPool: {}, pools.KindLoadBalancer: {}}
	for _, s := range p.steps {
		if s.act == actUpdate && changed[s.kind] != nil {
			changed[s.kind][s.id] = s.entry.doc
		}
	}
	if len(changed[pools.KindPool])+len(changed[pools.KindLoadBalancer]) == 0 {
		return nil
	}
	lbs, err := cl.objects(ctx, pools.KindLoadBalancer)
	if err != nil {
		return err
	}
	for _, o := range lbs {
		lb := o.(*pools.LoadBalancer)
		edits := map[string]any{}
		if doc, ok := changed[pools.KindLoadBalancer][lb.ID]; ok {
			edits["load_balancer"] = doc
		}
		ps := map[string]any{}
		for _, ref := range lb.PoolRefs() {
			if doc, ok := changed[pools.KindPool][ref.Pool]; ok {
				ps[ref.Pool] = doc
			}
		}
		if len(ps) > 0 {
			edits["pools"] = ps
		}
		if len(edits) == 0 {
			continue
		}
		body, _ := json.Marshal(map[string]any{"sample": "real", "edits": edits})
		b, _, err := cl.do(ctx, http.MethodPost, "/api/v1/load_balancers/"+lb.ID+"/preview", body, "")
		var ae *apiError
		if errors.As(err, &ae) && ae.Status == http.StatusConflict {
			fmt.Fprintf(w, "load_balancers/%s (%s): no real traffic sampled in the last hour to preview\n", lb.ID, lb.Name)
			continue
		}
		if err != nil {
			return err
		}
		var out struct{ Result api.Preview }
		if err := json.Unmarshal(b, &out); err != nil {
			return fmt.Errorf("preview of %s: %w", lb.ID, err)
		}
		pv := out.Result
		fmt.Fprintf(w, "load_balancers/%s (%s): %s (%d sampled queries of the last hour)\n", lb.ID, lb.Name, pv.Summary, pv.Sample.Queries)
		for _, m := range pv.Moves {
			fmt.Fprintf(w, "    %.1f %% from %s to %s\n", m.Share*100, m.FromName, m.ToName)
		}
	}
	return nil
}
