package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

func runExplain(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	c, fs := newCommand("explain", env, stderr, "table", "json")
	client := fs.String("client", "", "address of the client or its resolver (required)")
	ecs := fs.String("ecs", "", "EDNS Client Subnet the query carries, e.g. 203.0.113.0/24")
	qtype := fs.String("type", "A", "query type: A or AAAA")
	const usage = "usage: glbctl explain LB --client IP [--ecs CIDR] [--type A|AAAA]"
	pos, cl, err := commandArgs(fs, args, c, 1, 1, usage)
	if err == nil && *client == "" {
		err = errors.New(usage)
	}
	if err != nil {
		return usageError(stderr, err)
	}
	q := url.Values{"client": {*client}, "type": {*qtype}}
	if *ecs != "" {
		q.Set("ecs", *ecs)
	}
	lb, err := cl.resolve(ctx, pools.KindLoadBalancer, pos[0])
	if err != nil {
		return fail(stderr, exitFailed, err)
	}
	path := objectPath(pools.KindLoadBalancer, lb) + "/explain?" + q.Encode()
	return showAs(ctx, cl, path, c.output, stdout, stderr, "explanation", func(w io.Writer, e api.Explanation) {
		printExplanation(w, &e)
	})
}

// printExplanation follows the decision in the order it was taken:
// where the client is, which pools were candidates, which was chosen, the
// zonal affinity sets, the origin draw and the records.
func printExplanation(w io.Writer, e *api.Explanation) {
	d := &e.Decision
	policy := d.LoadBalancer.Policy
	answers := "every eligible origin"
	if n := d.LoadBalancer.Answers; n > 0 {
		answers = fmt.Sprintf("%d origin(s)", n)
	}
	fmt.Fprintf(w, "load balancer  %s (%s), steering %s, answers with %s, configuration revision %d\n",
		d.LoadBalancer.ID, d.LoadBalancer.Name, policy, answers, e.Revision)
	for _, h := range d.Safety {
		// Broken by health after a shift started: not refused then.
		fmt.Fprintf(w, "SAFETY         rule %s no longer holds: %s (%d)\n", h.Rule, h.Message, h.Minimum)
	}
	query := "client " + e.Client
	if e.ECS != "" {
		query += ", ECS " + e.ECS
	}
	fmt.Fprintf(w, "query          %s %s, located by %s\n", query, d.Client.QueryType, e.LocatedBy)
	for _, ig := range e.Ignored {
		fmt.Fprintf(w, "ignored        %s: %s\n", ig.What, ig.Reason)
	}
	var loc []string
	for _, kv := range [][2]string{{"zone", d.Client.Zone}, {"region", d.Client.Region}, {"country", d.Client.Country},
		{"subdivision", d.Client.Subdivision}, {"continent", d.Client.Continent}} {
		if kv[1] != "" {
			loc = append(loc, kv[0]+" "+kv[1])
		}
	}
	if d.Client.Latitude != nil && d.Client.Longitude != nil {
		loc = append(loc, fmt.Sprintf("at %s,%s", num(*d.Client.Latitude), num(*d.Client.Longitude)))
	}
	if !d.Client.Known || len(loc) == 0 {
		loc = []string{"unknown"}
	}
	if d.Client.ASN != 0 {
		loc = append(loc, steering.ASName(d.Client.ASN))
	}
	prefix := ""
	if d.Client.Prefix >= 0 {
		prefix = fmt.Sprintf(" (/%d)", d.Client.Prefix)
	}
	fmt.Fprintf(w, "client         %s%s\n", strings.Join(loc, ", "), prefix)

	fmt.Fprintln(w, "\ncandidate pools:")
	t := newTable(w, "POOL", "NAME", "SOURCE", "ENABLED", "HEALTHY", "ORIGINS UP/MIN", "DISTANCE_KM", "RTT_MS", "CHOSEN", "REASON")
	for _, c := range d.Candidates {
		t.row(c.ID, c.Name, c.Source, yesNo(c.Enabled), yesNo(c.Healthy), fmt.Sprintf("%d/%d", c.HealthyOrigins, c.MinimumOrigins),
			optNum(c.DistanceKm), optNum(c.RTTMs), yesNo(c.Chosen), c.Reason)
	}
	t.flush()
	if m := d.Measured; m != nil {
		level := m.Level
		if m.Group != "" {
			level += " " + m.Group
		}
		fmt.Fprintf(w, "measured       level %s: %s\n", level, m.Reason)
		for _, p := range m.Pools {
			counted := ""
			if !p.Counted {
				counted = " (under min_samples)"
			}
			fmt.Fprintf(w, "  %s median %s ms, p75 %s ms, %d samples%s\n", p.Name, ms(p.MedianMs), ms(p.P75Ms), p.Samples, counted)
		}
	}
	pool := d.Pool.ID
	switch {
	case pool == "":
		pool = "none"
	case d.Pool.FailOpen:
		pool += " (fail open)"
	case d.Pool.Fallback:
		pool += " (fallback)"
	}
	fmt.Fprintf(w, "\nchosen pool    %s: %s\n", pool, d.Pool.Reason)
	a := d.Affinity
	fmt.Fprintf(w, "zonal affinity %s, client zone %q: %s\n", a.Spillover, a.ClientZone, a.Result)
	fmt.Fprintf(w, "origins        %s draw over %s origins, picked %s\n", d.Origins.Policy, d.Origins.Family, orNone(strings.Join(d.Origins.Picked, ", ")))
	if len(d.Origins.Eligible) > 0 {
		ot := newTable(w, "  ORIGIN", "WEIGHT", "SHARE", "LOAD")
		for _, o := range d.Origins.Eligible {
			weight, load := num(o.Weight), ""
			if o.ConfiguredWeight != nil {
				weight = fmt.Sprintf("%s (of %s, by load)", num(o.Weight), num(*o.ConfiguredWeight))
			}
			if o.Load != nil {
				load = num(*o.Load)
			}
			ot.row("  "+o.Name, weight, fmt.Sprintf("%.1f%%", 100*o.Share), load)
		}
		ot.flush()
	}
	for _, o := range d.Origins.Overloaded {
		fmt.Fprintf(w, "  %s left out: its feeds report load %s, at or above load_shedding.by_load.high\n", o.Name, num(o.Load))
	}
	fmt.Fprintln(w, "\nanswer (TTL "+itoa(d.TTL)+", ECS scope /"+itoa(d.ECSScope)+"):")
	rt := newTable(w, "  ORIGIN", "TYPE", "VALUE")
	for _, r := range d.Records {
		rt.row("  "+r.Origin, r.Type, r.Value)
	}
	rt.flush()
}

func optNum(f *float64) string {
	if f == nil {
		return ""
	}
	return fmt.Sprintf("%.1f", *f)
}
