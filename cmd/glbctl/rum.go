package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

// runRUM shows what real users measured of a load balancer's pools
// (GET /load_balancers/{id}/rum; the console's load balancer page draws
// the same): per region, country, autonomous system, client network and
// resolver, each
// pool's median, p75 and samples, fastest first.
func runRUM(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	c, fs := newCommand("rum", env, stderr, "table", "json", "yaml")
	limit := fs.Int("limit", 0, "list at most this many autonomous systems, client networks and resolvers, most samples first (1 to 1000; default the API's, 100)")
	pos, cl, err := commandArgs(fs, args, c, 1, 1, "usage: glbctl rum LB [--limit N]")
	if err != nil {
		return usageError(stderr, err)
	}
	lb, err := cl.resolve(ctx, pools.KindLoadBalancer, pos[0])
	if err != nil {
		return fail(stderr, exitFailed, err)
	}
	path := objectPath(pools.KindLoadBalancer, lb) + "/rum"
	if *limit != 0 {
		// Passed on as given: the API names a bad one in its 400.
		path += "?" + url.Values{"limit": {strconv.Itoa(*limit)}}.Encode()
	}
	return showAs(ctx, cl, path, c.output, stdout, stderr, "real user measurements", func(w io.Writer, v api.RUMView) {
		printRUM(w, &v)
	})
}

// printRUM writes one row per group and pool, the groups by level
// (regions, countries, autonomous systems, networks, resolvers), each
// group's pools fastest
// first; FASTEST marks the pool measured_latency would put first there.
func printRUM(w io.Writer, v *api.RUMView) {
	tab := &v.Table
	fmt.Fprintf(w, "%s (%s), steering %s, min_samples %d\n", v.Name, v.LoadBalancer, v.SteeringPolicy, tab.MinSamples)
	if tab.Built == nil {
		fmt.Fprintln(w, "no real user measurements on this node yet")
		return
	}
	fmt.Fprintf(w, "table built %s over the last %s\n", tab.Built.Format("2006-01-02T15:04:05Z07:00"), tab.Window)
	if n := tab.ASNsTotal - len(tab.ASNs); n > 0 {
		fmt.Fprintf(w, "%d of %d autonomous systems shown (most samples first; --limit)\n", len(tab.ASNs), tab.ASNsTotal)
	}
	if n := tab.NetworksTotal - len(tab.Networks); n > 0 {
		fmt.Fprintf(w, "%d of %d client networks shown (most samples first; --limit)\n", len(tab.Networks), tab.NetworksTotal)
	}
	if n := tab.ResolversTotal - len(tab.Resolvers); n > 0 {
		fmt.Fprintf(w, "%d of %d resolvers shown (most samples first; --limit)\n", len(tab.Resolvers), tab.ResolversTotal)
	}
	fmt.Fprintln(w)
	t := newTable(w, "LEVEL", "GROUP", "POOL", "MEDIAN_MS", "P75_MS", "SAMPLES", "FASTEST")
	for _, l := range []struct {
		level  string
		groups []steering.RUMTableGroup
	}{{"region", tab.Regions}, {"country", tab.Countries}, {"asn", tab.ASNs}, {"network", tab.Networks}, {"resolver", tab.Resolvers}} {
		for _, g := range l.groups {
			for _, p := range g.Pools {
				samples := strconv.Itoa(p.Samples)
				if !p.Counted {
					samples += " (<min)"
				}
				mark := ""
				if p.Pool == g.Fastest {
					mark = "*"
				}
				t.row(l.level, g.Group, p.Name, ms(p.MedianMs), ms(p.P75Ms), samples, mark)
			}
		}
	}
	t.flush()
}

// ms is a RUM figure to a tenth of a millisecond (histogram buckets are
// 9 % apart: finer says nothing).
func ms(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }
