// Package storetest is the contract every pools.Store must meet, run by the
// tests of each store against the real thing.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

// contractTest is one part of the contract: it runs against a fresh store
// s, its calls bounded by c, the context Run gives every test.
type contractTest func(t *testing.T, c context.Context, s pools.Store)

// Run runs the contract against stores made by open, one fresh store per
// subtest.
func Run(t *testing.T, open func(t *testing.T) pools.Store) {
	tests := []struct {
		name string
		fn   contractTest
	}{
		{"CRUDEveryKind", testCRUD},
		{"DefaultsApplied", testDefaults},
		{"ValidationReportsEveryFieldAndStoresNothing", testValidation},
		{"DeleteReferencedIsConflict", testConflicts},
		{"UnknownReferencesRejected", testUnknownRefs},
		{"UniqueIDsAndNames", testUnique},
		{"NotFound", testNotFound},
		{"StaleRevision", testStale},
		{"Pagination", testPagination},
		{"RevisionAndWatch", testWatch},
		{"ConfigConsistent", testConfig},
		{"ZoneSerial", testSerial},
		{"ZoneRenameKeepsLoadBalancersInside", testZoneRename},
		{"Health", testHealth},
		{"HealthChanges", testHealthChanges},
		{"HealthFollowedByChanges", testHealthFollowed},
		{"ConcurrentWritersSerialise", testConcurrent},
		{"ZoneKeys", testZoneKeys},
		{"ZoneKeysConcurrent", testZoneKeysConcurrent},
		{"ZoneCuts", testZoneCuts},
		{"UpdateRecords", testUpdateRecords},
		{"ChangeFeed", testChanges},
		{"CookieSecret", testCookieSecret},
		{"Shifts", testShifts},
		{"ShiftPrune", testShiftPrune},
		{"Rollouts", testRollouts},
		{"RolloutCompletion", testRolloutCompletion},
		{"RolloutOrder", testRolloutOrder},
		{"SafetyRules", testSafetyRules},
		{"Nodes", testNodes},
		{"AnswerCounts", testAnswerCounts},
		{"AnswerCountsWindow", testAnswerCountsWindow},
		{"QuerySamples", testQuerySamples},
		{"RUM", testRUM},
		{"MonitorGroups", testMonitorGroups},
		{"MonitorTypes", testMonitorTypes},
		{"Feeds", testFeeds},
		{"NotifySubscriptions", testNotifySubscriptions},
		{"NotifyOutbox", testNotifyOutbox},
		// versions.go
		{"VersionsNumberWritesTouchingTheLoadBalancer", testVersionNumbers},
		{"VersionsAuditKindsFilter", testAuditKinds},
		{"RollbackRestoresTheVersion", testRollback},
		{"RollbackIsAtomic", testRollbackAtomic},
		{"RollbackRefusesAStalePlan", testRollbackStale},
		{"RollbackRecreatesDeletedObjects", testRollbackRecreates},
		{"VersionsOfADeletedLoadBalancer", testVersionsOfADeletedLoadBalancer},
	}
	tests = append(tests, accessTests...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			tc.fn(t, ctx(t), s)
		})
	}
}

// RunHealth runs the health parts of the contract alone, for a store
// made to take another path through them (the PostgreSQL store packing
// its views after every change).
func RunHealth(t *testing.T, open func(t *testing.T) pools.Store) {
	for name, fn := range map[string]contractTest{
		"Health": testHealth, "HealthChanges": testHealthChanges, "HealthFollowedByChanges": testHealthFollowed,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tc := fn
			tc(t, ctx(t), open(t))
		})
	}
}

// atOnce runs fn(0), ..., fn(n-1) at once, each on its goroutine, and
// waits for them all: writers that race, as nodes do.
func atOnce(n int, fn func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(i)
		}()
	}
	wg.Wait()
}

// oneWins reports whether, of two writes at one revision, one was stored
// and the other found the revision stale.
func oneWins(errs []error) bool {
	return (errs[0] == nil) != (errs[1] == nil) && errors.Is(errors.Join(errs...), pools.ErrStale)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// fixture holds one of every kind, wired together.
type fixture struct {
	zone    *pools.Zone
	monitor *pools.Monitor
	pool    *pools.Pool
	lb      *pools.LoadBalancer
	network *pools.Network
}

// Zone returns a valid zone named name.
func Zone(name string) *pools.Zone {
	z := pools.DefaultZone()
	z.Name = name
	z.Nameservers = []string{"ns1." + name}
	z.Records = []pools.Record{{Name: "ns1." + name, Type: "A", Content: "192.0.2.53"}}
	return &z
}

// Monitor returns a valid http monitor.
func Monitor() *pools.Monitor {
	m := pools.DefaultMonitor()
	m.Description = "web"
	return &m
}

// Pool returns a valid pool of two origins checked by monitor (may be "").
func Pool(name, monitor string) *pools.Pool {
	p := pools.DefaultPool()
	p.Name = name
	p.Monitor = monitor
	a, b := pools.DefaultOrigin(), pools.DefaultOrigin()
	a.Name, a.Address, a.Weight, a.Zone = "a", "192.0.2.1", 0.4, "zone-1"
	b.Name, b.Address, b.Weight, b.Zone = "b", "2001:db8::1", 0.6, "zone-2"
	p.Origins = []pools.Origin{a, b}
	return &p
}

// LoadBalancer returns a valid load balancer in zone using pool.
func LoadBalancer(name, zone, pool string) *pools.LoadBalancer {
	l := pools.DefaultLoadBalancer()
	l.Name = name
	l.Zone = zone
	l.DefaultPools = []string{pool}
	l.FallbackPool = pool
	return &l
}

// Network returns a valid network.
func Network(cidr string) *pools.Network {
	return &pools.Network{CIDR: cidr, Zone: "zone-1", Region: "WEU", Country: "IT"}
}

func mustCreate[T pools.Object](t *testing.T, s pools.Store, o T) T {
	t.Helper()
	out, err := s.Create(ctx(t), o)
	if err != nil {
		t.Fatalf("create %s: %v", o.Kind().Singular(), err)
	}
	return out.(T)
}

func newFixture(t *testing.T, s pools.Store) fixture {
	t.Helper()
	var f fixture
	f.zone = mustCreate(t, s, Zone("glb.example.com"))
	f.monitor = mustCreate(t, s, Monitor())
	f.pool = mustCreate(t, s, Pool("eu", f.monitor.ID))
	lb := LoadBalancer("www.glb.example.com", f.zone.ID, f.pool.ID)
	// Nested optional settings travel through the store too.
	lb.HTTPS = &pools.HTTPSRecord{ALPN: []string{"h2", "h3"}, Port: 8443}
	f.lb = mustCreate(t, s, lb)
	f.network = mustCreate(t, s, Network("10.1.0.0/16"))
	// The load balancer advanced the zone's serial.
	z, err := s.Get(ctx(t), pools.KindZone, f.zone.ID)
	if err != nil {
		t.Fatal(err)
	}
	f.zone = z.(*pools.Zone)
	return f
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sameObject(t *testing.T, what string, got, want any) {
	t.Helper()
	if g, w := asJSON(t, got), asJSON(t, want); g != w {
		t.Errorf("%s:\n got %s\nwant %s", what, g, w)
	}
}

func validationPaths(t *testing.T, err error) []string {
	t.Helper()
	var ve *pools.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("want *pools.ValidationError, got %T: %v", err, err)
	}
	var paths []string
	for _, fe := range ve.Errors {
		paths = append(paths, fe.Path)
	}
	return paths
}

func wantPaths(t *testing.T, err error, want ...string) {
	t.Helper()
	got := validationPaths(t, err)
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("validation error lacks %q; has %v", w, got)
		}
	}
}

func testCRUD(t *testing.T, _ context.Context, s pools.Store) {
	f := newFixture(t, s)
	c := ctx(t)
	for _, o := range []pools.Object{f.zone, f.monitor, f.pool, f.lb, f.network} {
		k, m := o.Kind(), o.ObjectMeta()
		if m.ID == "" || m.Revision != 1 || m.CreatedOn.IsZero() || !m.ModifiedOn.Equal(m.CreatedOn) {
			t.Errorf("%s: created meta %+v, want an id, revision 1, created_on = modified_on", k, *m)
		}
		got, err := s.Get(c, k, m.ID)
		if err != nil {
			t.Fatalf("get %s: %v", k, err)
		}
		sameObject(t, "get "+string(k), got, o)
	}

	// Replace each kind with a visible change.
	f.zone.TTL = 600
	f.monitor.Path = "/healthz"
	f.pool.Origins[0].Weight = 0.3
	f.lb.TTL = 60
	f.network.Region = "EEU"
	for _, o := range []pools.Object{f.zone, f.monitor, f.pool, f.lb, f.network} {
		k, id := o.Kind(), o.ObjectMeta().ID
		created := o.ObjectMeta().CreatedOn
		out, err := s.Replace(c, o, o.ObjectMeta().Revision)
		if err != nil {
			t.Fatalf("replace %s: %v", k, err)
		}
		m := out.ObjectMeta()
		if m.Revision != o.ObjectMeta().Revision+1 || !m.CreatedOn.Equal(created) || m.ModifiedOn.Before(created) {
			t.Errorf("%s: replaced meta %+v, want revision +1, created_on kept", k, *m)
		}
		got, err := s.Get(c, k, id)
		if err != nil {
			t.Fatalf("get %s after replace: %v", k, err)
		}
		sameObject(t, "get after replace "+string(k), got, out)
	}
	got, _ := s.Get(c, pools.KindPool, f.pool.ID)
	if w := got.(*pools.Pool).Origins[0].Weight; w != 0.3 {
		t.Errorf("pool origin weight after replace = %v, want 0.3", w)
	}

	// Delete in reverse dependency order.
	for _, o := range []pools.Object{f.network, f.lb, f.pool, f.monitor, f.zone} {
		k, id := o.Kind(), o.ObjectMeta().ID
		if err := s.Delete(c, k, id, 0); err != nil {
			t.Fatalf("delete %s: %v", k, err)
		}
		if _, err := s.Get(c, k, id); !errors.Is(err, pools.ErrNotFound) {
			t.Errorf("get deleted %s: err = %v, want ErrNotFound", k, err)
		}
	}
}

func testDefaults(t *testing.T, c context.Context, s pools.Store) {
	decode := func(k pools.Kind, doc string) pools.Object {
		o := pools.New(k)
		if err := json.Unmarshal([]byte(doc), o); err != nil {
			t.Fatalf("decode %s: %v", k, err)
		}
		out, err := s.Create(c, o)
		if err != nil {
			t.Fatalf("create %s: %v", k, err)
		}
		got, err := s.Get(c, k, out.ObjectMeta().ID)
		if err != nil {
			t.Fatalf("get %s: %v", k, err)
		}
		return got
	}
	z := decode(pools.KindZone, `{"name":"GLB.Example.COM.","nameservers":["ns1.glb.example.com"]}`).(*pools.Zone)
	if z.Name != "glb.example.com" || z.TTL != 300 || z.SOA.Refresh != 14400 || z.SOA.Retry != 3600 || z.Serial == 0 {
		t.Errorf("zone defaults: name %q ttl %d refresh %d serial %d", z.Name, z.TTL, z.SOA.Refresh, z.Serial)
	}
	m := decode(pools.KindMonitor, `{}`).(*pools.Monitor)
	if m.Type != pools.MonitorHTTP || m.Method != "GET" || m.Path != "/" || m.Interval != 60 || m.Timeout != 5 || m.Retries != 2 || m.ExpectedCodes != "200" {
		t.Errorf("monitor defaults: %+v", *m)
	}
	p := decode(pools.KindPool, `{"name":"p","origins":[{"name":"a","address":"192.0.2.1"}]}`).(*pools.Pool)
	if !p.Enabled || p.MinimumOrigins != 1 || p.OriginSteering.Policy != pools.OriginRandom ||
		!p.Origins[0].Enabled || p.Origins[0].Weight != 1 {
		t.Errorf("pool defaults: %+v", *p)
	}
	l := decode(pools.KindLoadBalancer, `{"name":"WWW.glb.example.com","zone":"`+z.ID+`","default_pools":["`+p.ID+`"],"fallback_pool":"`+p.ID+`"}`).(*pools.LoadBalancer)
	if l.Name != "www.glb.example.com" || !l.Enabled || l.TTL != 30 || l.Answers != 1 || l.RandomSteering.DefaultWeight != 1 ||
		l.LocationStrategy.PreferECS != pools.PreferECSAuto || l.ZonalAffinity.Spillover != pools.AffinityDisabled {
		t.Errorf("load balancer defaults: %+v", *l)
	}
}

func testValidation(t *testing.T, c context.Context, s pools.Store) {
	p := Pool("", "")
	p.MinimumOrigins = 0
	p.Origins[0].Weight = 1.5
	p.Origins[1].Address = "not an address!"
	p.OriginSteering.Policy = "round-robin"
	_, err := s.Create(c, p)
	wantPaths(t, err, "name", "minimum_origins", "origins[0].weight", "origins[1].address", "origin_steering.policy")

	n := Network("10.0.0.1/8")
	n.Region = "MARS"
	_, err = s.Create(c, n)
	wantPaths(t, err, "cidr", "region")

	for _, k := range []pools.Kind{pools.KindPool, pools.KindNetwork} {
		res, err := s.List(c, k, pools.Page{})
		if err != nil {
			t.Fatal(err)
		}
		if res.TotalCount != 0 {
			t.Errorf("%s: %d stored after failed creates, want 0", k, res.TotalCount)
		}
	}
	rev, err := s.Revision(c)
	if err != nil {
		t.Fatal(err)
	}
	if rev != 0 {
		t.Errorf("revision after failed writes = %d, want 0", rev)
	}

	// A failed replace leaves the stored object as it was.
	good := mustCreate(t, s, Pool("ok", ""))
	bad := *good
	bad.Origins = nil
	_, err = s.Replace(c, &bad, 0)
	wantPaths(t, err, "origins")
	got, err := s.Get(c, pools.KindPool, good.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameObject(t, "pool after failed replace", got, good)
}

func conflictOf(t *testing.T, err error) *pools.ConflictError {
	t.Helper()
	var ce *pools.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("want *pools.ConflictError, got %T: %v", err, err)
	}
	return ce
}

func referrerIDs(ce *pools.ConflictError) []string {
	var ids []string
	for _, r := range ce.Referrers {
		ids = append(ids, r.Kind+"/"+r.ID)
	}
	slices.Sort(ids)
	return ids
}

func testConflicts(t *testing.T, c context.Context, s pools.Store) {
	f := newFixture(t, s)
	other := mustCreate(t, s, Pool("other", f.monitor.ID))
	// A second load balancer uses the fixture pool only through the
	// fallback, a region list, a country list and the random weights.
	l2 := LoadBalancer("api.glb.example.com", f.zone.ID, other.ID)
	l2.FallbackPool = f.pool.ID
	l3 := LoadBalancer("geo.glb.example.com", f.zone.ID, other.ID)
	l3.RegionPools = map[string][]string{"WEU": {other.ID, f.pool.ID}}
	l4 := LoadBalancer("cc.glb.example.com", f.zone.ID, other.ID)
	l4.CountryPools = map[string][]string{"IT": {f.pool.ID}}
	l5 := LoadBalancer("rnd.glb.example.com", f.zone.ID, other.ID)
	l5.SteeringPolicy = pools.SteeringRandom
	l5.RandomSteering.PoolWeights = map[string]float64{f.pool.ID: 0.5}
	var lbIDs []string
	for _, l := range []*pools.LoadBalancer{f.lb, mustCreate(t, s, l2), mustCreate(t, s, l3), mustCreate(t, s, l4), mustCreate(t, s, l5)} {
		lbIDs = append(lbIDs, "load_balancer/"+l.ID)
	}
	slices.Sort(lbIDs)

	ce := conflictOf(t, s.Delete(c, pools.KindPool, f.pool.ID, 0))
	if got := referrerIDs(ce); !slices.Equal(got, lbIDs) {
		t.Errorf("pool referrers = %v, want %v", got, lbIDs)
	}
	if ce.Kind != "pool" || ce.ID != f.pool.ID {
		t.Errorf("conflict names %s %s, want pool %s", ce.Kind, ce.ID, f.pool.ID)
	}
	ce = conflictOf(t, s.Delete(c, pools.KindZone, f.zone.ID, 0))
	if got := referrerIDs(ce); !slices.Equal(got, lbIDs) {
		t.Errorf("zone referrers = %v, want %v", got, lbIDs)
	}
	ce = conflictOf(t, s.Delete(c, pools.KindMonitor, f.monitor.ID, 0))
	want := []string{"pool/" + f.pool.ID, "pool/" + other.ID}
	slices.Sort(want)
	if got := referrerIDs(ce); !slices.Equal(got, want) {
		t.Errorf("monitor referrers = %v, want %v", got, want)
	}
	for _, r := range ce.Referrers {
		if r.Name == "" {
			t.Errorf("referrer %s/%s has no name", r.Kind, r.ID)
		}
	}
	// Nothing was deleted.
	for _, o := range []pools.Object{f.pool, f.zone, f.monitor} {
		if _, err := s.Get(c, o.Kind(), o.ObjectMeta().ID); err != nil {
			t.Errorf("%s after refused delete: %v", o.Kind(), err)
		}
	}
}

func testUnknownRefs(t *testing.T, c context.Context, s pools.Store) {
	f := newFixture(t, s)
	l := LoadBalancer("x.glb.example.com", "nozone", "nopool")
	l.RegionPools = map[string][]string{"WEU": {f.pool.ID, "nopool2"}}
	_, err := s.Create(c, l)
	wantPaths(t, err, "zone", "default_pools[0]", "fallback_pool", "region_pools.WEU[1]")
	for _, p := range validationPaths(t, err) {
		if p == "region_pools.WEU[0]" {
			t.Errorf("existing pool reported as unknown")
		}
	}
	_, err = s.Create(c, Pool("p", "nomonitor"))
	wantPaths(t, err, "monitor")

	// A name outside its zone is caught with the zone resolved in the tx.
	_, err = s.Create(c, LoadBalancer("www.other.example", f.zone.ID, f.pool.ID))
	wantPaths(t, err, "name")
}

func testUnique(t *testing.T, c context.Context, s pools.Store) {
	f := newFixture(t, s)
	_, err := s.Create(c, Zone("GLB.example.com."))
	wantPaths(t, err, "name")
	_, err = s.Create(c, LoadBalancer("WWW.glb.example.com", f.zone.ID, f.pool.ID))
	wantPaths(t, err, "name")
	_, err = s.Create(c, Network("10.1.0.0/16"))
	wantPaths(t, err, "cidr")

	dup := Pool("dup", "")
	dup.ID = f.pool.ID
	_, err = s.Create(c, dup)
	wantPaths(t, err, "id")
	bad := Pool("bad", "")
	bad.ID = "no/slashes"
	_, err = s.Create(c, bad)
	wantPaths(t, err, "id")

	chosen := Pool("chosen", "")
	chosen.ID = "pool-eu-1"
	if got := mustCreate(t, s, chosen); got.ID != "pool-eu-1" {
		t.Errorf("client-chosen id = %q, want pool-eu-1", got.ID)
	}

	// Replacing an object with its own name is not a clash, and a renamed
	// load balancer frees its old name.
	if _, err := s.Replace(c, f.zone, 0); err != nil {
		t.Errorf("replace zone with its own name: %v", err)
	}
	renamed := *f.lb
	renamed.Name = "web.glb.example.com"
	if _, err := s.Replace(c, &renamed, 0); err != nil {
		t.Fatalf("rename load balancer: %v", err)
	}
	mustCreate(t, s, LoadBalancer("www.glb.example.com", f.zone.ID, f.pool.ID))
}

func testNotFound(t *testing.T, c context.Context, s pools.Store) {
	for _, k := range pools.Kinds {
		if _, err := s.Get(c, k, "missing"); !errors.Is(err, pools.ErrNotFound) {
			t.Errorf("get %s: %v, want ErrNotFound", k, err)
		}
		if err := s.Delete(c, k, "missing", 0); !errors.Is(err, pools.ErrNotFound) {
			t.Errorf("delete %s: %v, want ErrNotFound", k, err)
		}
	}
	p := Pool("p", "")
	p.ID = "missing"
	if _, err := s.Replace(c, p, 0); !errors.Is(err, pools.ErrNotFound) {
		t.Errorf("replace missing pool: %v, want ErrNotFound", err)
	}
}

func testStale(t *testing.T, c context.Context, s pools.Store) {
	p := mustCreate(t, s, Pool("p", ""))
	v2, err := s.Replace(c, p, 1)
	if err != nil {
		t.Fatalf("replace at revision 1: %v", err)
	}
	if _, err := s.Replace(c, p, 1); !errors.Is(err, pools.ErrStale) {
		t.Errorf("replace at stale revision 1: %v, want ErrStale", err)
	}
	if err := s.Delete(c, pools.KindPool, p.ID, 1); !errors.Is(err, pools.ErrStale) {
		t.Errorf("delete at stale revision 1: %v, want ErrStale", err)
	}
	if err := s.Delete(c, pools.KindPool, p.ID, v2.ObjectMeta().Revision); err != nil {
		t.Errorf("delete at current revision: %v", err)
	}
}

func testPagination(t *testing.T, c context.Context, s pools.Store) {
	var ids []string
	for _, cidr := range []string{"10.0.0.0/24", "10.0.1.0/24", "10.0.2.0/24", "10.0.3.0/24", "10.0.4.0/24"} {
		ids = append(ids, mustCreate(t, s, Network(cidr)).ID)
	}
	for _, tc := range []struct {
		page pools.Page
		want []string
	}{
		{pools.Page{}, ids},
		{pools.Page{Page: 1, PerPage: 2}, ids[0:2]},
		{pools.Page{Page: 2, PerPage: 2}, ids[2:4]},
		{pools.Page{Page: 3, PerPage: 2}, ids[4:]},
		{pools.Page{Page: 4, PerPage: 2}, nil},
	} {
		res, err := s.List(c, pools.KindNetwork, tc.page)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, o := range res.Items {
			got = append(got, o.ObjectMeta().ID)
		}
		if !slices.Equal(got, tc.want) || res.TotalCount != len(ids) {
			t.Errorf("page %+v: ids %v total %d, want %v total %d", tc.page, got, res.TotalCount, tc.want, len(ids))
		}
	}
}

// waitChange reads ch until a change satisfies ok or the deadline passes.
func waitChange(t *testing.T, ch <-chan pools.Change, what string, ok func(pools.Change) bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case c, open := <-ch:
			if !open {
				t.Fatalf("watch closed while waiting for %s", what)
			}
			if ok(c) {
				return
			}
		case <-deadline:
			t.Fatalf("no change reported for %s within 10s", what)
		}
	}
}

// watchUp makes a configuration write and waits for its change on ch,
// returning the revision it made: a change after it is a notification of
// its own. Before it, PostgreSQL's listener may still be connecting, and
// the change it reports on connecting says everything may have changed
// (and is merged with any other): a write whose notification is missing
// would go unnoticed.
func watchUp(t *testing.T, c context.Context, s pools.Store, ch <-chan pools.Change) int64 {
	t.Helper()
	mustCreate(t, s, Monitor())
	rev, err := s.Revision(c)
	if err != nil {
		t.Fatal(err)
	}
	waitChange(t, ch, "a configuration write", func(c pools.Change) bool { return c.Revision >= rev })
	return rev
}

func testWatch(t *testing.T, c context.Context, s pools.Store) {
	wctx, stop := context.WithCancel(c)
	ch := s.Watch(wctx)
	r0, err := s.Revision(c)
	if err != nil {
		t.Fatal(err)
	}
	z := mustCreate(t, s, Zone("glb.example.com"))
	r1, err := s.Revision(c)
	if err != nil {
		t.Fatal(err)
	}
	if r1 <= r0 {
		t.Errorf("revision after create = %d, want > %d", r1, r0)
	}
	waitChange(t, ch, "zone create", func(ch pools.Change) bool { return ch.Revision >= r1 })

	if err := s.Delete(c, pools.KindZone, z.ID, 0); err != nil {
		t.Fatal(err)
	}
	r2, _ := s.Revision(c)
	if r2 <= r1 {
		t.Errorf("revision after delete = %d, want > %d", r2, r1)
	}
	waitChange(t, ch, "zone delete", func(ch pools.Change) bool { return ch.Revision >= r2 })

	stop()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, open := <-ch:
			if !open {
				return
			}
		case <-deadline:
			t.Fatal("watch channel not closed after its context ended")
		}
	}
}

func testConfig(t *testing.T, c context.Context, s pools.Store) {
	// A kind without objects reads as [], not null.
	empty, err := s.Config(c)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(empty)
	want := fmt.Sprintf(`{"revision":%d,"zones":[],"monitors":[],"pools":[],"load_balancers":[],"networks":[]}`, empty.Revision)
	if string(got) != want {
		t.Errorf("config of an empty store = %s, want %s", got, want)
	}
	f := newFixture(t, s)
	cfg, err := s.Config(c)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := s.Revision(c)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Revision != rev || rev == 0 {
		t.Errorf("config revision %d, store revision %d", cfg.Revision, rev)
	}
	sameObject(t, "config zones", cfg.Zones, []pools.Zone{*f.zone})
	sameObject(t, "config monitors", cfg.Monitors, []pools.Monitor{*f.monitor})
	sameObject(t, "config pools", cfg.Pools, []pools.Pool{*f.pool})
	sameObject(t, "config load balancers", cfg.LoadBalancers, []pools.LoadBalancer{*f.lb})
	sameObject(t, "config networks", cfg.Networks, []pools.Network{*f.network})
}

func serial(t *testing.T, s pools.Store, zoneID string) uint32 {
	t.Helper()
	z, err := s.Get(ctx(t), pools.KindZone, zoneID)
	if err != nil {
		t.Fatal(err)
	}
	return z.(*pools.Zone).Serial
}

func testSerial(t *testing.T, c context.Context, s pools.Store) {
	in := Zone("glb.example.com")
	in.Serial = 7 // read-only: the store sets it
	z := mustCreate(t, s, in)
	other := mustCreate(t, s, Zone("other.example.com"))
	if z.Serial == 7 || z.Serial == 0 {
		t.Errorf("created zone serial = %d, want one the store chose", z.Serial)
	}
	p := mustCreate(t, s, Pool("p", ""))
	last := serial(t, s, z.ID)
	otherSerial := serial(t, s, other.ID)
	advanced := func(what string) {
		t.Helper()
		now := serial(t, s, z.ID)
		if int32(now-last) <= 0 {
			t.Errorf("serial after %s = %d, want > %d", what, now, last)
		}
		last = now
	}
	l := mustCreate(t, s, LoadBalancer("www.glb.example.com", z.ID, p.ID))
	advanced("load balancer create")
	l.TTL = 120
	if _, err := s.Replace(c, l, 0); err != nil {
		t.Fatal(err)
	}
	advanced("load balancer replace")
	z2, _ := s.Get(c, pools.KindZone, z.ID)
	z2.(*pools.Zone).TTL = 900
	if _, err := s.Replace(c, z2, 0); err != nil {
		t.Fatal(err)
	}
	advanced("zone replace")
	if err := s.Delete(c, pools.KindLoadBalancer, l.ID, 0); err != nil {
		t.Fatal(err)
	}
	advanced("load balancer delete")
	if got := serial(t, s, other.ID); got != otherSerial {
		t.Errorf("serial of an untouched zone moved from %d to %d", otherSerial, got)
	}
}

func testZoneRename(t *testing.T, c context.Context, s pools.Store) {
	f := newFixture(t, s)
	z := *f.zone
	z.Name = "elsewhere.example.org"
	_, err := s.Replace(c, &z, 0)
	wantPaths(t, err, "name")
	z.Name = "example.com" // still contains www.glb.example.com
	if _, err := s.Replace(c, &z, 0); err != nil {
		t.Errorf("rename to a parent zone: %v", err)
	}
}

// Writers racing for one name: exactly one wins, the others get the same
// validation error a lone writer would, and every success is one revision.
func testConcurrent(t *testing.T, c context.Context, s pools.Store) {
	const writers = 8
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			_, errs[i] = s.Create(c, Zone("race.example.com"))
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
			continue
		}
		wantPaths(t, err, "name")
	}
	if won != 1 {
		t.Errorf("%d writers created the same zone name, want 1", won)
	}
	if rev, err := s.Revision(c); err != nil || rev != 1 {
		t.Errorf("revision after the race = %d (%v), want 1", rev, err)
	}
}
