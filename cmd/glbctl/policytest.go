package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/netip"
	"os"
	"slices"
	"strings"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/geodata"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

// policyFile is a policy test file: what must stay true of a
// configuration, checked by compiling it with the steering code the
// server runs.
type policyFile struct {
	Tests []policyCase `json:"tests"`
	Rules []policyRule `json:"rules"`
}

// policyCase is one client's query and the answer it must get.
type policyCase struct {
	Name         string       `json:"name"`
	LoadBalancer string       `json:"load_balancer"`
	Client       policyClient `json:"client"`
	// Type is A (the default) or AAAA.
	Type string `json:"type"`
	// Down marks pools ("eu") or origins ("eu/a") down for this case.
	Down   []string     `json:"down"`
	Expect policyExpect `json:"expect"`
}

// policyClient is where the query comes from: an address (a resolver
// without ECS), a subnet (sent as ECS), or a place. Offline, addresses and
// subnets are located by the file's networks only (there is no GeoIP
// database); a place is a country, a region, or both.
type policyClient struct {
	Address string `json:"address"`
	Subnet  string `json:"subnet"`
	Country string `json:"country"`
	Region  string `json:"region"`
}

// policyExpect is the answer wanted: the pool that answers, and the
// origins it may answer with (every origin that can be answered must be
// one of them).
type policyExpect struct {
	Pool     string   `json:"pool"`
	Origins  []string `json:"origins"`
	Fallback *bool    `json:"fallback"`
}

// policyRule is a property of the whole configuration.
type policyRule struct {
	Name string `json:"name"`
	// LoadBalancers the rule is about; empty: every one.
	LoadBalancers []string `json:"load_balancers"`
	// MinPools: each load balancer refers to at least this many distinct
	// enabled pools (default, region, country and fallback pools).
	MinPools int `json:"min_pools"`
	// GeoPoolsEnabled: no country or region maps to a disabled pool.
	GeoPoolsEnabled bool `json:"geo_pools_enabled"`
}

func runTest(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	var c common
	fs := newFlags("test", env, stderr, &c)
	file := fs.String("f", "", "configuration file to test offline (no server, no database); without it, the --server's configuration")
	tests := fs.String("t", "", "policy test file (required)")
	pos, err := parseFlags(fs, args, &c)
	if err != nil {
		return usageError(stderr, err)
	}
	if len(pos) > 0 || *tests == "" {
		return usageError(stderr, errors.New("usage: glbctl test -t TESTS [-f FILE | --server URL]"))
	}
	pf, err := readPolicyFile(*tests)
	if err != nil {
		return fail(stderr, exitTrouble, err)
	}
	var objs []pools.Object
	source := *file
	if *file != "" {
		f, err := readConfigFile(*file, os.Stdin)
		if err != nil {
			return fail(stderr, exitTrouble, err)
		}
		for _, e := range f.entries {
			objs = append(objs, e.obj)
		}
	} else {
		cl, err := newClient(c)
		if err != nil {
			return usageError(stderr, err)
		}
		st, err := readState(ctx, cl)
		if err != nil {
			return fail(stderr, exitTrouble, err)
		}
		for _, k := range applyOrder {
			for _, o := range st[k] {
				objs = append(objs, o)
			}
		}
		source = c.server
	}
	cfg := configOf(objs)
	if err := pf.check(*tests, cfg); err != nil {
		return fail(stderr, exitTrouble, err)
	}
	failed, err := pf.run(cfg, stdout)
	if err != nil {
		return fail(stderr, exitTrouble, err)
	}
	fmt.Fprintf(stdout, "%d of %d passed (%s)\n", len(pf.Tests)+len(pf.Rules)-failed, len(pf.Tests)+len(pf.Rules), source)
	if failed > 0 {
		return exitFailed
	}
	return exitOK
}

// readPolicyFile reads a policy test file strictly: an unknown field is
// an error, so that a misspelt expectation never passes by checking
// nothing.
func readPolicyFile(name string) (*policyFile, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var pf policyFile
	if err := decodeYAML(name, data, &pf, (*json.Decoder).DisallowUnknownFields); err != nil {
		return nil, err
	}
	if len(pf.Tests)+len(pf.Rules) == 0 {
		return nil, fmt.Errorf("%s: no tests and no rules", name)
	}
	return &pf, nil
}

// configOf gathers objects into the configuration steering compiles.
func configOf(objs []pools.Object) *pools.Config {
	cfg := &pools.Config{}
	for _, o := range objs {
		cfg.Add(o)
	}
	return cfg
}

// check refuses a test that cannot mean what it says: every problem at
// once, by its place in the file.
func (pf *policyFile) check(name string, cfg *pools.Config) error {
	var errs []string
	bad := func(path, format string, args ...any) {
		errs = append(errs, path+": "+fmt.Sprintf(format, args...))
	}
	lbs := map[string]bool{}
	for _, l := range cfg.LoadBalancers {
		lbs[l.ID] = true
	}
	poolOf := map[string]*pools.Pool{}
	for i := range cfg.Pools {
		poolOf[cfg.Pools[i].ID] = &cfg.Pools[i]
	}
	seen := map[string]string{}
	named := func(path, n string) {
		switch {
		case n == "":
			bad(path+".name", "required")
		case seen[n] != "":
			bad(path+".name", "%q is also the name of %s", n, seen[n])
		default:
			seen[n] = path
		}
	}
	for i, c := range pf.Tests {
		path := fmt.Sprintf("tests[%d]", i)
		named(path, c.Name)
		if !lbs[c.LoadBalancer] {
			bad(path+".load_balancer", "%q: no load balancer has this id", c.LoadBalancer)
		}
		if err := c.Client.check(); err != nil {
			bad(path+".client", "%v", err)
		}
		if c.Type != "" && c.Type != "A" && c.Type != "AAAA" {
			bad(path+".type", "%q: must be A or AAAA", c.Type)
		}
		for j, d := range c.Down {
			pid, origin, hasOrigin := strings.Cut(d, "/")
			p := poolOf[pid]
			switch {
			case p == nil:
				bad(fmt.Sprintf("%s.down[%d]", path, j), "%q: no pool has the id %q", d, pid)
			case !p.Checked():
				bad(fmt.Sprintf("%s.down[%d]", path, j), "%q: pool %s has no monitor, so the server never sees its origins down", d, pid)
			case hasOrigin && !slices.ContainsFunc(p.Origins, func(o pools.Origin) bool { return o.Name == origin }):
				bad(fmt.Sprintf("%s.down[%d]", path, j), "%q: pool %s has no origin %q", d, pid, origin)
			}
		}
		if c.Expect.Pool == "" && len(c.Expect.Origins) == 0 && c.Expect.Fallback == nil {
			bad(path+".expect", "expects nothing: give pool, origins or fallback")
		}
		if c.Expect.Pool != "" && poolOf[c.Expect.Pool] == nil {
			bad(path+".expect.pool", "%q: no pool has this id", c.Expect.Pool)
		}
	}
	for i, r := range pf.Rules {
		path := fmt.Sprintf("rules[%d]", i)
		named(path, r.Name)
		for j, id := range r.LoadBalancers {
			if !lbs[id] {
				bad(fmt.Sprintf("%s.load_balancers[%d]", path, j), "%q: no load balancer has this id", id)
			}
		}
		if r.MinPools <= 0 && !r.GeoPoolsEnabled {
			bad(path, "states nothing: give min_pools or geo_pools_enabled")
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s: %d problem(s)\n  %s", name, len(errs), strings.Join(errs, "\n  "))
	}
	return nil
}

func (c policyClient) check() error {
	n := 0
	for _, v := range []string{c.Address, c.Subnet} {
		if v != "" {
			n++
		}
	}
	if c.Country != "" || c.Region != "" {
		n++
	}
	if n != 1 {
		return errors.New("give one of address, subnet, or a place (country, region or both)")
	}
	if c.Address != "" {
		if _, err := netip.ParseAddr(c.Address); err != nil {
			return fmt.Errorf("address %q: not an IPv4 or IPv6 address", c.Address)
		}
	}
	if c.Subnet != "" {
		if _, err := netip.ParsePrefix(c.Subnet); err != nil {
			return fmt.Errorf("subnet %q: not a CIDR prefix such as 203.0.113.0/24", c.Subnet)
		}
	}
	if c.Country != "" || c.Region != "" {
		if _, ok := steering.Place(c.Region, strings.ToUpper(c.Country)); !ok {
			return fmt.Errorf("country %q, region %q: not a known place (or the country is not in the region)", c.Country, c.Region)
		}
	}
	return nil
}

func (c policyClient) String() string {
	switch {
	case c.Address != "":
		return "address " + c.Address
	case c.Subnet != "":
		return "subnet " + c.Subnet
	case c.Country != "" && c.Region != "":
		return "country " + c.Country + " in " + c.Region
	case c.Country != "":
		return "country " + c.Country
	}
	return "region " + c.Region
}

// run runs every test and rule, writes one line for each and the
// explanation of each failure, and returns how many failed.
func (pf *policyFile) run(cfg *pools.Config, w io.Writer) (failed int, err error) {
	nets, err := geodata.NewNetworks(cfg.Networks)
	if err != nil {
		return 0, fmt.Errorf("networks: %w", err)
	}
	loc := geodata.Locator{Networks: nets}
	// One snapshot per set of down marks: most cases share the healthy one.
	snaps := map[string]*steering.Snapshot{}
	for _, c := range pf.Tests {
		key := strings.Join(c.Down, ",")
		s := snaps[key]
		if s == nil {
			if s, err = steering.Compile(cfg, downHealth(cfg, c.Down)); err != nil {
				return 0, fmt.Errorf("the configuration does not compile: %w", err)
			}
			snaps[key] = s
		}
		var tr steering.Trace
		located := decide(s, loc, &c, &tr)
		if msg := c.Expect.mismatch(&tr); msg != "" {
			failed++
			fmt.Fprintf(w, "FAIL %s: load balancer %s, client %s", c.Name, c.LoadBalancer, c.Client)
			if len(c.Down) > 0 {
				fmt.Fprintf(w, ", down %s", strings.Join(c.Down, ", "))
			}
			fmt.Fprintf(w, "\n  %s\n  explain:\n", msg)
			var b strings.Builder
			printExplanation(&b, &api.Explanation{Revision: cfg.Revision, Client: c.Client.String(), LocatedBy: located, Decision: tr})
			for line := range strings.Lines(b.String()) {
				fmt.Fprint(w, "    ", line)
			}
			continue
		}
		fmt.Fprintf(w, "ok   %s\n", c.Name)
	}
	for _, r := range pf.Rules {
		if broken := r.broken(cfg); len(broken) > 0 {
			failed++
			fmt.Fprintf(w, "FAIL %s\n", r.Name)
			for _, b := range broken {
				fmt.Fprintf(w, "  %s\n", b)
			}
			continue
		}
		fmt.Fprintf(w, "ok   %s\n", r.Name)
	}
	return failed, nil
}

// downHealth is every origin healthy but those down marks: a pool, or
// one of its origins.
func downHealth(cfg *pools.Config, down []string) *pools.Health {
	h := map[pools.OriginKey]pools.OriginHealth{}
	for _, d := range down {
		pid, origin, hasOrigin := strings.Cut(d, "/")
		for _, p := range cfg.Pools {
			if p.ID != pid {
				continue
			}
			for _, o := range p.Origins {
				if !hasOrigin || o.Name == origin {
					h[pools.OriginKey{Pool: pid, Origin: o.Name}] = pools.OriginHealth{Reason: "down in the test"}
				}
			}
		}
	}
	return pools.NewHealth(h, nil)
}

// decide runs the server's decision for the case's client into tr, and
// says what located the client.
func decide(s *steering.Snapshot, loc steering.Locator, c *policyCase, tr *steering.Trace) (located string) {
	lb := s.LoadBalancerByID(c.LoadBalancer)
	qtype := steering.QTypeA
	if c.Type == "AAAA" {
		qtype = steering.QTypeAAAA
	}
	var req steering.Request
	switch {
	case c.Client.Address != "":
		located = lb.FillRequest(&req, netip.MustParseAddr(c.Client.Address), netip.Prefix{}, qtype, loc).String()
	case c.Client.Subnet != "":
		p := netip.MustParsePrefix(c.Client.Subnet).Masked()
		located = lb.FillRequest(&req, p.Addr(), p, qtype, loc).String()
	default:
		req = steering.Request{SourcePrefix: -1, Type: qtype}
		req.Client, _ = steering.Place(c.Client.Region, strings.ToUpper(c.Client.Country))
		located = "the place named in the test"
	}
	var ans steering.Answer
	s.Decide(lb, &req, steering.FastRand{}, &ans, tr)
	return located
}

// mismatch says how the decision differs from the expectation, "" when
// it does not.
func (e policyExpect) mismatch(tr *steering.Trace) string {
	var could []string // every origin that can be answered
	for _, o := range tr.Origins.Eligible {
		if o.Share > 0 {
			could = append(could, o.Name)
		}
	}
	var wrong []string
	if e.Pool != "" && tr.Pool.ID != e.Pool {
		wrong = append(wrong, "pool")
	}
	if len(e.Origins) > 0 && (len(could) == 0 || slices.ContainsFunc(could, func(o string) bool { return !slices.Contains(e.Origins, o) })) {
		wrong = append(wrong, "origins")
	}
	if e.Fallback != nil && tr.Pool.Fallback != *e.Fallback {
		wrong = append(wrong, "fallback")
	}
	if len(wrong) == 0 {
		return ""
	}
	got := "no pool (all_down: " + tr.AllDown.Result + ")"
	if tr.Pool.ID != "" {
		got = fmt.Sprintf("pool %s, origins %v, fallback %t", tr.Pool.ID, could, tr.Pool.Fallback)
	}
	want := []string{}
	if e.Pool != "" {
		want = append(want, "pool "+e.Pool)
	}
	if len(e.Origins) > 0 {
		want = append(want, fmt.Sprintf("origins among %v", e.Origins))
	}
	if e.Fallback != nil {
		want = append(want, fmt.Sprintf("fallback %t", *e.Fallback))
	}
	return fmt.Sprintf("wrong %s: expected %s; got %s", strings.Join(wrong, " and "), strings.Join(want, ", "), got)
}

// broken lists where the rule does not hold.
func (r policyRule) broken(cfg *pools.Config) []string {
	enabled := map[string]bool{}
	for _, p := range cfg.Pools {
		enabled[p.ID] = p.Enabled
	}
	var out []string
	for _, l := range cfg.LoadBalancers {
		if len(r.LoadBalancers) > 0 && !slices.Contains(r.LoadBalancers, l.ID) {
			continue
		}
		all := slices.Concat(l.DefaultPools, []string{l.FallbackPool})
		for _, region := range slices.Sorted(maps.Keys(l.RegionPools)) {
			all = append(all, l.RegionPools[region]...)
			if r.GeoPoolsEnabled {
				out = append(out, disabledIn(enabled, l.ID, "region_pools."+region, l.RegionPools[region])...)
			}
		}
		for _, country := range slices.Sorted(maps.Keys(l.CountryPools)) {
			all = append(all, l.CountryPools[country]...)
			if r.GeoPoolsEnabled {
				out = append(out, disabledIn(enabled, l.ID, "country_pools."+country, l.CountryPools[country])...)
			}
		}
		if r.MinPools > 0 {
			var on []string
			for _, p := range all {
				if enabled[p] && !slices.Contains(on, p) {
					on = append(on, p)
				}
			}
			if len(on) < r.MinPools {
				out = append(out, fmt.Sprintf("load balancer %s has %d enabled pool(s) %v, fewer than %d", l.ID, len(on), on, r.MinPools))
			}
		}
	}
	return out
}

func disabledIn(enabled map[string]bool, lb, where string, list []string) []string {
	var out []string
	for _, p := range list {
		if !enabled[p] {
			out = append(out, fmt.Sprintf("load balancer %s: %s maps to pool %s, which is disabled", lb, where, p))
		}
	}
	return out
}
