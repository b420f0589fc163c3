package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/glb-dns/glb/api"
)

// trafficFilters are GET /analytics's dimensions, each a flag of traffic
// that passes its value on unchecked: the API knows the values a load
// balancer has (its pools and origins, the regions) and names them in its
// 400, which says more than a second list kept here would.
var trafficFilters = []struct{ name, usage string }{
	{"pool", "only answers this pool (id or name) gave"},
	{"origin", "only answers whose first record is this origin (name)"},
	{"region", "only clients placed in this region (glbctl regions lists them; unknown: not placed)"},
	{"country", "only clients placed in this country (ISO 3166-1 alpha-2; unknown: not placed)"},
	{"rcode", "only answers with this response code: NOERROR, FORMERR, SERVFAIL, NXDOMAIN, NOTIMP, REFUSED"},
}

// runTraffic shows where a load balancer's answers went: the answer
// counts every node keeps, merged, per group (GET /analytics; the
// console's traffic page draws the same).
func runTraffic(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	c, fs := newCommand("traffic", env, stderr, "table", "json", "yaml")
	q := url.Values{}
	// Only the flags given are sent, so that the API's defaults (the last
	// hour, the finest step that fits, by pool) stay its own.
	set := func(param string) func(string) error {
		return func(v string) error { q.Set(param, v); return nil }
	}
	fs.Func("since", "from this RFC 3339 time (default an hour before --until)", set("since"))
	fs.Func("until", "to this RFC 3339 time (default now)", set("until"))
	fs.Func("step", "bucket width of --by-step: a multiple of 10s, such as 1m (default the finest that fits)", set("step"))
	fs.Func("group-by", "count per these, comma-separated: pool, origin, region, country, rcode (default pool; \"\": one group)", set("group_by"))
	for _, f := range trafficFilters {
		fs.Func(f.name, f.usage, set(f.name))
	}
	byStep := fs.Bool("by-step", false, "one row per group and step with answers, instead of the totals")
	pos, cl, err := commandArgs(fs, args, c, 1, 1,
		"usage: glbctl traffic LB [--since T] [--until T] [--step S] [--group-by DIMS] [--pool ID] [--origin NAME] [--region R] [--country CC] [--rcode RCODE] [--by-step]")
	if err != nil {
		return usageError(stderr, err)
	}
	q.Set("load_balancer", pos[0])
	return showAs(ctx, cl, apiPrefix+"/analytics?"+q.Encode(), c.output, stdout, stderr, "answer counts", func(w io.Writer, a api.Analytics) {
		printTraffic(w, &a, *byStep)
	})
}

// printTraffic writes what was counted and until when it is complete,
// then the totals per group, most first (or each group's steps).
func printTraffic(w io.Writer, a *api.Analytics, byStep bool) {
	fmt.Fprintf(w, "%s (%s): %d answers from %s to %s, in %s steps\n", a.Name, a.LoadBalancer, a.Answers,
		a.Since.Format(time.RFC3339), a.Until.Format(time.RFC3339), time.Duration(a.Step)*time.Second)
	if a.CompleteUntil.Before(a.Until) {
		fmt.Fprintf(w, "every node has written its counts up to %s; later steps may still grow\n", a.CompleteUntil.Format(time.RFC3339))
	}
	fmt.Fprintln(w)
	var header []string
	if byStep {
		header = append(header, "TIME")
	}
	for _, d := range a.GroupBy {
		header = append(header, strings.ToUpper(d))
	}
	if byStep {
		t := newTable(w, append(header, "ANSWERS")...)
		// Every series has a point per step: step by step, the groups in
		// the totals' order.
		for i := 0; len(a.Series) > 0 && i < len(a.Series[0].Points); i++ {
			for _, s := range a.Series {
				if i >= len(s.Points) || s.Points[i].Answers == 0 {
					continue
				}
				row := []string{s.Points[i].Time.Format(time.RFC3339)}
				for _, d := range a.GroupBy {
					row = append(row, s.Group[d])
				}
				t.row(append(row, itoa(s.Points[i].Answers))...)
			}
		}
		t.flush()
		return
	}
	t := newTable(w, append(header, "ANSWERS", "SHARE")...)
	for _, g := range a.Totals {
		var row []string
		for _, d := range a.GroupBy {
			v, _ := g[d].(string)
			row = append(row, v)
		}
		n, _ := g["answers"].(float64)
		share := ""
		if a.Answers > 0 {
			share = fmt.Sprintf("%.1f%%", 100*n/float64(a.Answers))
		}
		t.row(append(row, num(n), share)...)
	}
	t.flush()
}

// runRegions lists the client regions glb places clients in, with the
// countries (and US and Canadian subdivisions) of each: the values of
// geo steering's region_pools and of traffic --region.
func runRegions(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	c, fs := newCommand("regions", env, stderr, "table", "json", "yaml")
	_, cl, err := commandArgs(fs, args, c, 0, 0, "usage: glbctl regions")
	if err != nil {
		return usageError(stderr, err)
	}
	return showAs(ctx, cl, apiPrefix+"/regions", c.output, stdout, stderr, "regions", printRegions)
}

func printRegions(w io.Writer, rs []api.Region) {
	t := newTable(w, "CODE", "NAME", "LATITUDE", "LONGITUDE", "COUNTRIES AND SUBDIVISIONS")
	for _, r := range rs {
		t.row(r.Code, r.Name, fmt.Sprintf("%.1f", r.Latitude), fmt.Sprintf("%.1f", r.Longitude), strings.Join(append(append([]string{}, r.Countries...), r.Subdivisions...), " "))
	}
	t.flush()
}
