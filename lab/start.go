package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// clientPeriod is how often the client asks each node each query.
const clientPeriod = 100 * time.Millisecond

// labIDs are the objects the lab configures.
type labIDs struct {
	zone string
	rev  int // the last octet of rev.<zone>'s address
}

func revAddr(n int) string { return fmt.Sprintf("198.18.200.%d", n) }

// start brings the whole lab up: namespaces, PostgreSQL, origins, nodes,
// the client, the configuration; it returns once every node answers
// every query as the configuration says.
func (l *lab) start() error {
	if err := l.setUp(); err != nil {
		return err
	}
	pg, err := newPostgres(l.ns("pg"), filepath.Join(l.dir, "pg"))
	if err != nil {
		return err
	}
	if err := pg.start(); err != nil {
		return err
	}
	l.pg = pg
	// NEAS logs in as a role of its own, with a node's rights on every
	// table the migrations will make; drill 11 takes one of them away.
	if err := pg.exec("create role " + ownRole + " login;" +
		"alter default privileges for role postgres in schema public grant all on tables to " + ownRole + ";" +
		"alter default privileges for role postgres in schema public grant all on sequences to " + ownRole); err != nil {
		return err
	}
	if l.origins, err = startOrigins(l); err != nil {
		return err
	}
	if l.client, err = startClient(l.ns("client"), clientPeriod); err != nil {
		return err
	}
	l.api = newAPIClient(l.ns("client"))
	if l.router, err = l.startRouter(); err != nil {
		return err
	}
	for i := range regions {
		// The first node applies the migrations; the others wait for it,
		// as operations.md advises for nodes started at once.
		n := &node{l: l, region: i, name: strings.ToLower(regions[i]), migrate: i == 0, role: "postgres",
			dataDir: filepath.Join(l.dir, "data-"+strings.ToLower(regions[i]))}
		if i == feedVictim {
			n.role = ownRole
		}
		l.nodes = append(l.nodes, n)
		if err := n.start(); err != nil {
			return err
		}
		if err := n.waitServing(60 * time.Second); err != nil {
			return err
		}
	}
	if err := l.configure(); err != nil {
		return err
	}
	if l.anycast, err = startAnycastClient(l.ns("client")); err != nil {
		return err
	}
	if l.router.waitNextHop(time.Now(), 0, 30*time.Second) == 0 {
		return fmt.Errorf("the router has no route to WEU for the anycast address; it holds routes from %v", l.router.announcers())
	}
	// Every RTT must have been measured and published before the first
	// drill: a few intervals.
	return l.settle(l.base(), time.Duration(10*l.interval)*time.Second+30*time.Second)
}

// configure writes the lab's zone, networks, monitor, pools and load
// balancers through the first node's API.
func (l *lab) configure() error {
	n := l.nodes[0]
	l.ids = labIDs{zone: "lab", rev: 1}
	calls := []struct {
		path string
		body any
	}{
		{"/api/v1/zones", map[string]any{"id": "lab", "name": strings.TrimSuffix(zoneName, "."),
			"nameservers": []string{"ns1." + strings.TrimSuffix(zoneName, ".")},
			"records":     []map[string]any{{"name": "rev." + strings.TrimSuffix(zoneName, "."), "type": "A", "content": revAddr(1)}}}},
		{"/api/v1/monitors", map[string]any{"id": "lab", "type": "http", "path": "/health", "port": 80,
			"expected_codes": "200", "interval": l.interval, "timeout": l.timeout, "retries": 0,
			"consecutive_up": consecutiveUp, "consecutive_down": consecutiveDown}},
	}
	for i, r := range regions {
		calls = append(calls, struct {
			path string
			body any
		}{"/api/v1/networks", map[string]any{"cidr": fmt.Sprintf("198.18.%d.0/24", 11+i), "region": r,
			"description": "the lab's clients of " + r}})
		var origins []map[string]any
		for j := range originsPerRegion {
			origins = append(origins, map[string]any{"name": fmt.Sprintf("o%d", j+1), "address": originAddr(i, j).String()})
		}
		calls = append(calls, struct {
			path string
			body any
		}{"/api/v1/pools", map[string]any{"id": strings.ToLower(r), "name": strings.ToLower(r), "monitor": "lab", "origins": origins}})
	}
	order := []string{"weu", "enam", "neas"}
	for _, lb := range []struct{ name, policy string }{{"www", "off"}, {"near", "dynamic_latency"}} {
		calls = append(calls, struct {
			path string
			body any
		}{"/api/v1/load_balancers", map[string]any{"id": lb.name, "zone": "lab", "name": lb.name + "." + strings.TrimSuffix(zoneName, "."),
			"steering_policy": lb.policy, "default_pools": order, "fallback_pool": "neas", "ttl": 5}})
	}
	for _, c := range calls {
		if err := l.api.call(n, "POST", c.path, c.body, nil); err != nil {
			return err
		}
	}
	return nil
}

// setRev rewrites rev.<zone> through node n's API, retrying while the
// store is unreachable (503) for up to within; it returns when the write
// was accepted.
func (l *lab) setRev(n *node, octet int, within time.Duration) (time.Time, error) {
	deadline := time.Now().Add(within)
	for {
		at := time.Now()
		err := l.api.call(n, "PATCH", "/api/v1/zones/"+l.ids.zone, map[string]any{
			"records": []map[string]any{{"name": "rev." + strings.TrimSuffix(zoneName, "."), "type": "A", "content": revAddr(octet)}},
		}, nil)
		if err == nil {
			l.ids.rev = octet
			return at, nil
		}
		if time.Now().After(deadline) {
			return at, err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// base is the world of an undisturbed lab.
func (l *lab) base() world {
	return world{table: *l.origins.table.Load(), sees: seesAll, rev: revAddr(l.ids.rev)}
}

// settle waits until every node's last three answers to every query are
// what w says.
func (l *lab) settle(w world, within time.Duration) error {
	from := time.Now()
	deadline := from.Add(within)
	for {
		bad := ""
		last := map[[2]int][]string{}
		for _, s := range l.client.since(from) {
			k := [2]int{s.node, s.q}
			last[k] = append(last[k], s.answer)
		}
		for n := range regions {
			for qi, q := range queries {
				a := last[[2]int{n, qi}]
				if len(a) < 3 {
					bad = fmt.Sprintf("%s on %s: too few answers yet", q, regions[n])
					continue
				}
				for _, ans := range a[len(a)-3:] {
					if !contains(w.expect(q), ans) {
						bad = fmt.Sprintf("%s on %s: %q, want one of %v", q, regions[n], ans, w.expect(q))
					}
				}
			}
		}
		if bad == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the lab did not settle within %v: %s", within, bad)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
