package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/glb-dns/glb/pools"
)

// kindNames maps what a person types to a kind.
var kindNames = map[string]pools.Kind{
	"zone": pools.KindZone, "zones": pools.KindZone,
	"monitor": pools.KindMonitor, "monitors": pools.KindMonitor,
	"network": pools.KindNetwork, "networks": pools.KindNetwork,
	"pool": pools.KindPool, "pools": pools.KindPool,
	"lb": pools.KindLoadBalancer, "lbs": pools.KindLoadBalancer,
	"load_balancer": pools.KindLoadBalancer, "load_balancers": pools.KindLoadBalancer,
	"load-balancer": pools.KindLoadBalancer, "load-balancers": pools.KindLoadBalancer,
}

func runGet(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	c, fs := newCommand("get", env, stderr, "table", "json", "yaml")
	pos, cl, err := commandArgs(fs, args, c, 1, 2, "usage: glbctl get KIND [ID]; KIND is one of "+kindList())
	if err != nil {
		return usageError(stderr, err)
	}
	k, ok := kindNames[strings.ToLower(pos[0])]
	if !ok {
		return usageError(stderr, fmt.Errorf("unknown kind %q; want one of %s", pos[0], kindList()))
	}
	var raws []json.RawMessage
	if len(pos) == 2 {
		var raw json.RawMessage
		id, err := cl.resolve(ctx, k, pos[1])
		if err == nil {
			err = cl.result(ctx, objectPath(k, id), &raw)
		}
		if err != nil {
			return fail(stderr, exitFailed, err)
		}
		raws = append(raws, raw)
	} else if raws, err = cl.list(ctx, k); err != nil {
		return fail(stderr, exitFailed, err)
	}
	if c.output != "table" {
		raw, err := json.Marshal(raws)
		if len(pos) == 2 {
			raw = raws[0]
		}
		if err == nil {
			err = printRaw(stdout, raw, c.output)
		}
		if err != nil {
			return fail(stderr, exitFailed, err)
		}
		return exitOK
	}
	objs := make([]pools.Object, len(raws))
	for i, raw := range raws {
		objs[i] = pools.New(k)
		if err := json.Unmarshal(raw, objs[i]); err != nil {
			fmt.Fprintf(stderr, "glbctl: decoding a %s (is the server newer than glbctl?): %v\n", k.Singular(), err)
			return exitFailed
		}
	}
	printObjects(stdout, k, objs, len(pos) == 2)
	return exitOK
}

// printObjects prints one table row per object; for one pool or zone, its
// origins or records follow.
func printObjects(w io.Writer, k pools.Kind, objs []pools.Object, one bool) {
	switch k {
	case pools.KindZone:
		t := newTable(w, "ID", "NAME", "NAMESERVERS", "TTL", "RECORDS", "SERIAL", "REVISION")
		for _, o := range objs {
			z := o.(*pools.Zone)
			t.row(z.ID, z.Name, strings.Join(z.Nameservers, ","), itoa(z.TTL), itoa(len(z.Records)), itoa(z.Serial), itoa(z.Revision))
		}
		t.flush()
		if one && len(objs[0].(*pools.Zone).Records) > 0 {
			fmt.Fprintln(w)
			rt := newTable(w, "NAME", "TYPE", "TTL", "CONTENT")
			for _, r := range objs[0].(*pools.Zone).Records {
				ttl := "zone's"
				if r.TTL > 0 {
					ttl = itoa(r.TTL)
				}
				rt.row(r.Name, r.Type, ttl, r.Content)
			}
			rt.flush()
		}
	case pools.KindMonitor:
		t := newTable(w, "ID", "TYPE", "TARGET", "EXPECT", "INTERVAL", "TIMEOUT", "RETRIES", "REVISION")
		for _, o := range objs {
			m := o.(*pools.Monitor)
			target, expect := monitorTarget(m)
			if m.Port != 0 {
				target = strings.TrimSpace(target + " :" + itoa(m.Port))
			}
			t.row(m.ID, string(m.Type), target, expect, itoa(m.Interval)+"s", itoa(m.Timeout)+"s", itoa(m.Retries), itoa(m.Revision))
		}
		t.flush()
	case pools.KindNetwork:
		t := newTable(w, "ID", "CIDR", "ZONE", "REGION", "COUNTRY", "DESCRIPTION", "REVISION")
		for _, o := range objs {
			n := o.(*pools.Network)
			t.row(n.ID, n.CIDR, n.Zone, n.Region, n.Country, n.Description, itoa(n.Revision))
		}
		t.flush()
	case pools.KindPool:
		t := newTable(w, "ID", "NAME", "ENABLED", "MONITOR", "MINIMUM", "ORIGINS", "REVISION")
		for _, o := range objs {
			p := o.(*pools.Pool)
			names := make([]string, len(p.Origins))
			for i, og := range p.Origins {
				names[i] = og.Name
			}
			t.row(p.ID, p.Name, yesNo(p.Enabled), monitorsOf(p.Monitor, p.Monitors), itoa(p.MinimumOrigins), strings.Join(names, ","), itoa(p.Revision))
		}
		t.flush()
		if one {
			fmt.Fprintln(w)
			ot := newTable(w, "ORIGIN", "ADDRESS", "ENABLED", "WEIGHT", "ZONE")
			for _, og := range objs[0].(*pools.Pool).Origins {
				ot.row(og.Name, shownAddress(og.Address), yesNo(og.Enabled), num(og.Weight), og.Zone)
			}
			ot.flush()
		}
	case pools.KindLoadBalancer:
		t := newTable(w, "ID", "NAME", "ZONE", "ENABLED", "POLICY", "DEFAULT_POOLS", "FALLBACK", "TTL", "REVISION")
		for _, o := range objs {
			l := o.(*pools.LoadBalancer)
			t.row(l.ID, l.Name, l.Zone, yesNo(l.Enabled), string(l.Policy()), strings.Join(l.DefaultPools, ","), l.FallbackPool, itoa(l.TTL), itoa(l.Revision))
		}
		t.flush()
		if one {
			l := objs[0].(*pools.LoadBalancer)
			for _, m := range []struct {
				title string
				pools map[string][]string
			}{{"REGION", l.RegionPools}, {"COUNTRY", l.CountryPools}} {
				if len(m.pools) == 0 {
					continue
				}
				fmt.Fprintln(w)
				rt := newTable(w, m.title, "POOLS")
				for _, key := range slices.Sorted(maps.Keys(m.pools)) {
					rt.row(key, strings.Join(m.pools[key], ","))
				}
				rt.flush()
			}
		}
	}
}

// monitorTarget is what a monitor asks and what it expects, by its type.
func monitorTarget(m *pools.Monitor) (target, expect string) {
	switch m.Type {
	case pools.MonitorTCP:
		return "", ""
	case pools.MonitorUDP:
		return strings.TrimSpace(m.PayloadEncoding + " " + strconv.Quote(m.Send)), strconv.Quote(m.Expect)
	case pools.MonitorDNS:
		return m.QueryName + " " + m.QueryType + " over " + cmp.Or(m.Protocol, pools.DNSOverUDP),
			strings.TrimSpace(cmp.Or(m.ExpectedRcode, "NOERROR") + " " + m.ExpectedAnswer)
	case pools.MonitorTLS:
		return m.ServerName, "valid " + itoa(m.MinDaysValid) + "+ days"
	case pools.MonitorSMTP:
		if m.StartTLS {
			return "STARTTLS " + m.ServerName, "220, EHLO"
		}
		return "", "220, EHLO"
	case pools.MonitorGRPC:
		if m.TLS {
			return "Health/Check " + strconv.Quote(m.Service) + " over TLS " + m.ServerName, "SERVING"
		}
		return "Health/Check " + strconv.Quote(m.Service), "SERVING"
	case pools.MonitorICMP:
		return itoa(cmp.Or(m.Count, pools.DefaultICMPCount)) + " echo requests", "loss <= " + itoa(m.MaxLoss) + "%"
	case pools.MonitorFeed:
		return "fed in", "ttl " + itoa(cmp.Or(m.TTL, pools.DefaultFeedTTL)) + " s"
	}
	return m.Method + " " + m.Path, m.ExpectedCodes
}
