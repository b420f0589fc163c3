package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/pools"
)

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
