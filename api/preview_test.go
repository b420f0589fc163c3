package api_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/analytics"
	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/geodata"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

// compiled serves previews from a snapshot compiled from the store on
// every call, with the operator networks and no GeoIP database: the real
// steering engine without a DNS server around it.
func compiled(t *testing.T, store pools.Store) func() (*steering.Snapshot, steering.Locator) {
	return func() (*steering.Snapshot, steering.Locator) {
		cfg, err := store.Config(context.Background())
		if err != nil {
			t.Errorf("config: %v", err)
			return nil, nil
		}
		snap, err := steering.Compile(cfg, nil)
		if err != nil {
			t.Errorf("compile: %v", err)
			return nil, nil
		}
		nets, err := geodata.NewNetworks(cfg.Networks)
		if err != nil {
			t.Errorf("networks: %v", err)
			return nil, nil
		}
		return snap, geodata.Locator{Networks: nets}
	}
}

func previewEnv(t *testing.T, opt func(*api.Options)) *env {
	var e *env
	e = newEnv(t, func(o *api.Options) {
		o.Snapshot = func() (*steering.Snapshot, steering.Locator) { return compiled(t, e.store)() }
		if opt != nil {
			opt(o)
		}
	})
	return e
}

func near(got, want map[string]float64) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || math.Abs(g-v) > 1e-9 {
			return false
		}
	}
	return true
}

func TestPreview(t *testing.T) {
	t.Parallel()
	e := previewEnv(t, nil)
	f := e.fixture()
	path := "/api/v1/load_balancers/" + f.lb + "/preview"
	sample := []map[string]any{{"subnet": "10.1.2.0/24"}, {"region": "WEU"}, {"country": "us"}, {"region": "ENAM", "country": "US"}}

	var got struct{ Result api.Preview }
	r := e.do("POST", path, map[string]any{"clients": sample})
	if r.status != http.StatusOK {
		t.Fatalf("preview: %d %s", r.status, r.body)
	}
	r.json(t, &got)
	p := got.Result
	// A question: a and b are web-eu's IPv4 origins, weighted 0.4 and 0.3.
	if want := map[string]float64{"web-eu": 1, "web-eu/a": 4.0 / 7, "web-eu/b": 3.0 / 7}; !near(p.Now.ByName(), want) {
		t.Errorf("now %v, want %v", p.Now.ByName(), want)
	}
	if p.After != nil || p.Clients != 4 || p.Type != "A" || p.Revision < 5 {
		t.Errorf("preview without edits: %+v", p)
	}
	// Steering off, prefer_ecs auto: where a client is does not matter,
	// and the answer says the ECS subnet is not what places it.
	if p.UsesECS || p.PreferECS != "auto" {
		t.Errorf("off steering: uses_ecs %v, prefer_ecs %q; want false, auto", p.UsesECS, p.PreferECS)
	}

	// Unsaved edits: b's weight to 0.6, and a new IPv4 origin d.
	edit := map[string]any{"origins": []map[string]any{
		{"name": "a", "address": "192.0.2.10", "weight": 0.4, "zone": "zone-1"},
		{"name": "b", "address": "192.0.2.11", "weight": 0.6, "zone": "zone-1"},
		{"name": "c", "address": "2001:db8::12", "weight": 0.3, "zone": "zone-2"},
		{"name": "d", "address": "192.0.2.13", "weight": 1},
	}}
	got = struct{ Result api.Preview }{}
	r = e.do("POST", path, map[string]any{"clients": sample, "edits": map[string]any{"pools": map[string]any{f.pool: edit}}})
	if r.status != http.StatusOK {
		t.Fatalf("preview with edits: %d %s", r.status, r.body)
	}
	r.json(t, &got)
	if want := map[string]float64{"web-eu": 1, "web-eu/a": 0.2, "web-eu/b": 0.3, "web-eu/d": 0.5}; got.Result.After == nil || !near(got.Result.After.ByName(), want) {
		t.Errorf("after %+v, want %v", got.Result.After, want)
	}
	if !near(got.Result.Now.ByName(), p.Now.ByName()) {
		t.Errorf("now moved with an unsaved edit: %v", got.Result.Now.ByName())
	}
	// Nothing was stored (and the audit check finds no entry).
	var stored struct{ Result pools.Pool }
	e.do("GET", "/api/v1/pools/"+f.pool, nil).json(t, &stored)
	if stored.Result.Revision != 1 || len(stored.Result.Origins) != 3 || stored.Result.Origins[1].Weight != 0.3 {
		t.Errorf("the pool changed: %+v", stored.Result)
	}

	// AAAA: only c has an IPv6 address.
	got = struct{ Result api.Preview }{}
	e.do("POST", path, map[string]any{"clients": sample, "type": "aaaa"}).json(t, &got)
	if want := map[string]float64{"web-eu": 1, "web-eu/c": 1}; got.Result.Type != "AAAA" || !near(got.Result.Now.ByName(), want) {
		t.Errorf("AAAA %+v", got.Result)
	}

	// An edit of the load balancer: a second pool first.
	other := e.create(pools.KindPool, map[string]any{"name": "other", "origins": []map[string]any{{"name": "o", "address": "192.0.2.50"}}})["id"].(string)
	got = struct{ Result api.Preview }{}
	e.do("POST", path, map[string]any{"clients": sample, "edits": map[string]any{
		"load_balancer": map[string]any{"default_pools": []string{other, f.pool}}}}).json(t, &got)
	if want := map[string]float64{"other": 1, "other/o": 1}; got.Result.After == nil || !near(got.Result.After.ByName(), want) {
		t.Errorf("after reordering %+v, want %v", got.Result.After, want)
	}

	// The order of the candidates per place: under proximity, with other
	// in Tokyo and web-eu in Frankfurt, NEAS's clients try other first
	// and WEU's web-eu first, each at its distance; now (off) every
	// client has the configured order.
	got = struct{ Result api.Preview }{}
	r = e.do("POST", path, map[string]any{"clients": []map[string]any{{"region": "NEAS"}}, "edits": map[string]any{
		"load_balancer": map[string]any{"steering_policy": "proximity", "default_pools": []string{f.pool, other}},
		"pools": map[string]any{
			other:  map[string]any{"latitude": 35.7, "longitude": 139.7},
			f.pool: map[string]any{"latitude": 50.1, "longitude": 8.7},
		}}})
	r.json(t, &got)
	order := func(o steering.CandidateOrder) string {
		var names []string
		for _, p := range o.Pools {
			km := "?"
			if p.DistanceKm != nil {
				km = fmt.Sprintf("%.0f", *p.DistanceKm/1000)
			}
			names = append(names, p.Name+"@"+km)
		}
		return fmt.Sprintf("%s %.2f", strings.Join(names, " "), o.Share)
	}
	if a := got.Result.After; r.status != http.StatusOK || a == nil || len(a.Orders) != 1 || order(a.Orders[0]) != "other@1 web-eu@9 1.00" {
		t.Errorf("proximity's order from NEAS: %d %s", r.status, r.body)
	}
	if n := got.Result.Now.Orders; len(n) != 1 || order(n[0]) != "web-eu@? 1.00" {
		t.Errorf("the order now from NEAS: %s", r.body)
	}
}

func TestPreviewErrors(t *testing.T) {
	t.Parallel()
	e := previewEnv(t, nil)
	f := e.fixture()
	path := "/api/v1/load_balancers/" + f.lb + "/preview"

	p := e.do("POST", path, map[string]any{
		"clients": []map[string]any{{"subnet": "10.0.0.0/99"}, {"region": "MARS"}, {"country": "ZZ"},
			{"subnet": "10.0.0.0/8", "region": "WEU"}, {}, {"region": "ENAM", "country": "FR"}},
		"type": "MX",
		"edits": map[string]any{
			"pools": map[string]any{
				"nope": map[string]any{"name": "x"},
				f.pool: map[string]any{"minimum_origins": 0, "origins": []map[string]any{{"name": "a", "address": "192.0.2.10", "weight": 2, "wieght": 1}}},
			},
			"load_balancer": map[string]any{"default_pools": []string{"missing"}},
		},
	}).problem(t, http.StatusBadRequest)
	want := []string{"clients[0].subnet", "clients[1].region", "clients[2].country", "clients[3]", "clients[4]", "clients[5].country", "type",
		"edits.pools.nope", "edits.pools." + f.pool + ".origins[0].wieght", "edits.load_balancer.default_pools[0]"}
	paths := fieldPaths(p)
	for _, w := range want {
		if !paths[w] {
			t.Errorf("no error at %s: %v", w, p.Errors)
		}
	}
	// Shape errors come first, as for PATCH; the value errors of a
	// well-formed patch are named too.
	p = e.do("POST", path, map[string]any{"clients": []map[string]any{{"region": "WEU"}},
		"edits": map[string]any{"pools": map[string]any{f.pool: map[string]any{"minimum_origins": 0,
			"origins": []map[string]any{{"name": "a", "address": "not an address!", "weight": 2}}}}}}).problem(t, http.StatusBadRequest)
	for _, w := range []string{"minimum_origins", "origins[0].address", "origins[0].weight"} {
		if !fieldPaths(p)["edits.pools."+f.pool+"."+w] {
			t.Errorf("no error at edits.pools.%s.%s: %v", f.pool, w, p.Errors)
		}
	}

	for _, c := range []struct {
		body any
		at   string
	}{
		{map[string]any{}, "clients"},
		{map[string]any{"clients": []any{}}, "clients"},
		{map[string]any{"clients": "WEU"}, "clients"},
		{map[string]any{"clients": []map[string]any{{"region": "WEU"}}, "client": 1}, "client"},
		{map[string]any{"clients": []map[string]any{{"region": "WEU"}}, "edits": map[string]any{"pools": []any{}}}, "edits.pools"},
		{map[string]any{"clients": []map[string]any{{"region": "WEU"}}, "edits": map[string]any{"load_balancer": map[string]any{"enabled": false}}}, "edits.load_balancer.enabled"},
	} {
		p := e.do("POST", path, c.body).problem(t, http.StatusBadRequest)
		if !fieldPaths(p)[c.at] {
			t.Errorf("%v: no error at %s: %v", c.body, c.at, p.Errors)
		}
	}
	many := make([]map[string]any, api.MaxPreviewClients+1)
	for i := range many {
		many[i] = map[string]any{"region": "WEU"}
	}
	if p := e.do("POST", path, map[string]any{"clients": many}).problem(t, http.StatusBadRequest); !fieldPaths(p)["clients"] {
		t.Errorf("%d clients: %v", len(many), p.Errors)
	}
	one := map[string]any{"clients": []map[string]any{{"region": "WEU"}}}
	e.do("POST", "/api/v1/load_balancers/nope/preview", one).problem(t, http.StatusNotFound)
	e.do("POST", path, "clients=WEU", "Content-Type", "application/x-www-form-urlencoded").problem(t, http.StatusUnsupportedMediaType)

	// A disabled load balancer is not served: nothing to preview.
	if r := e.do("PATCH", "/api/v1/load_balancers/"+f.lb, map[string]any{"enabled": false}); r.status != http.StatusOK {
		t.Fatalf("disable: %d %s", r.status, r.body)
	}
	if p := e.do("POST", path, one).problem(t, http.StatusBadRequest); !strings.Contains(p.Errors[0].Message, "disabled") {
		t.Errorf("disabled: %+v", p)
	}

	none := newEnv(t, nil) // no steering engine
	g := none.fixture()
	none.do("POST", "/api/v1/load_balancers/"+g.lb+"/preview", one).problem(t, http.StatusNotImplemented)
}

// TestPreviewScope: a read token may preview, since nothing is stored;
// other POSTs still need write.
func TestPreviewScope(t *testing.T) {
	t.Parallel()
	e := previewEnv(t, func(o *api.Options) { o.Token = "bootstrap-secret" })
	f := e.fixture()
	read := e.newToken("dashboard", "read")
	one := map[string]any{"clients": []map[string]any{{"region": "WEU"}}}
	if r := e.do("POST", "/api/v1/load_balancers/"+f.lb+"/preview", one, bearer(read)...); r.status != http.StatusOK {
		t.Fatalf("read token preview: %d %s", r.status, r.body)
	}
	for _, path := range []string{"/api/v1/load_balancers/" + f.lb + "/preview/x", "/api/v1/load_balancers/" + f.lb + "/x/preview", "/api/v1/load_balancers//preview", "/api/v1/pools/" + f.pool + "/preview"} {
		if p := e.do("POST", path, one, bearer(read)...).problem(t, http.StatusForbidden); p.MissingScope != "write" {
			t.Errorf("POST %s with a read token: %+v", path, p)
		}
	}
}

// TestRegionsListTheTable: GET /regions names the thirteen regions in
// order, places every accepted country in exactly the region geo steering
// gives it, and lists the subdivisions of split countries where their
// rows put them.
func TestRegionsListTheTable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	r := e.do("GET", "/api/v1/regions", nil)
	if r.status != http.StatusOK {
		t.Fatalf("GET /regions: %d %s", r.status, r.body)
	}
	var got struct{ Result []api.Region }
	r.json(t, &got)
	if len(got.Result) != len(pools.Regions) {
		t.Fatalf("%d regions, want %d", len(got.Result), len(pools.Regions))
	}
	home := map[string]string{}
	for i, reg := range got.Result {
		if reg.Code != pools.Regions[i] || reg.Name == "" || reg.Latitude == 0 && reg.Longitude == 0 {
			t.Errorf("region %d: %+v", i, reg)
		}
		for _, c := range reg.Countries {
			if was, twice := home[c]; twice {
				t.Errorf("%s in %s and %s", c, was, reg.Code)
			}
			home[c] = reg.Code
		}
		for _, sub := range reg.Subdivisions {
			if want := geodata.RegionOf(sub[:2], sub[3:]); want != reg.Code {
				t.Errorf("%s listed in %s, RegionOf says %s", sub, reg.Code, want)
			}
		}
	}
	for _, c := range pools.CountryCodes() {
		if want := geodata.RegionOf(c, ""); home[c] != want {
			t.Errorf("%s listed in %q, RegionOf says %q", c, home[c], want)
		}
	}
	wnam := got.Result[slices.Index(pools.Regions, "WNAM")]
	if !slices.Contains(wnam.Subdivisions, "US-CA") || slices.Contains(wnam.Subdivisions, "US-NY") {
		t.Errorf("WNAM subdivisions %v: want US-CA and not US-NY", wnam.Subdivisions)
	}
}

// TestPreviewReal: the real-traffic preview replays the last hour of the
// load balancer's sampled A queries, merged across nodes, each subnet
// weighted by its queries, and says which share of them an edit moves
// from pool to pool; asking it with clients, or for a sample nobody
// knows, is a 400, and with nothing sampled a 409.
func TestPreviewReal(t *testing.T) {
	t.Parallel()
	e := previewEnv(t, nil)
	f := e.fixture()
	usID := e.anotherPool(f, "web-us")
	body := lbBody(f.zone, f.pool)
	body["name"], body["country_pools"] = "shop.glb.example.com", map[string]any{"DE": []string{usID}}
	lb := e.create(pools.KindLoadBalancer, body)["id"].(string)
	path := "/api/v1/load_balancers/" + lb + "/preview"

	e.do("POST", path, map[string]any{"sample": "real"}).problem(t, http.StatusConflict)
	minute := time.Now().Truncate(time.Minute)
	de, unknown := netip.MustParsePrefix("10.1.2.0/24"), netip.MustParsePrefix("198.51.100.0/24")
	key := analytics.LBKey(lb)
	for node, rows := range map[string][]pools.QuerySample{
		"node-a": {{Minute: minute, LB: key, Subnet: de, Type: 1, Count: 20}, {Minute: minute, LB: key, Subnet: unknown, Type: 1, Count: 10},
			{Minute: minute, LB: key, Subnet: unknown, Type: 28, Count: 500}},
		"node-b": {{Minute: minute, LB: key, Subnet: de, Type: 1, Count: 10}, {Minute: minute.Add(-2 * time.Hour), LB: key, Subnet: unknown, Type: 1, Count: 900},
			{Minute: minute, LB: analytics.LBKey(f.lb), Subnet: unknown, Type: 1, Count: 900}},
	} {
		if err := e.store.AddQuerySamples(t.Context(), node, rows); err != nil {
			t.Fatal(err)
		}
	}
	var got struct{ Result api.Preview }
	r := e.do("POST", path, map[string]any{"sample": "real", "edits": map[string]any{"pools": map[string]any{usID: map[string]any{"enabled": false}}}})
	if r.status != http.StatusOK {
		t.Fatalf("real preview: %d %s", r.status, r.body)
	}
	r.json(t, &got)
	p := got.Result
	// 30 queries from DE (web-us), 10 from nowhere (web-eu, the default).
	if s := p.Sample; s == nil || s.Queries != 40 || s.Subnets != 2 || s.Left != 0 || s.Source != "real" {
		t.Fatalf("sample %+v", p.Sample)
	}
	if now := p.Now.ByName(); !near(map[string]float64{"web-us": now["web-us"], "web-eu": now["web-eu"]}, map[string]float64{"web-us": 0.75, "web-eu": 0.25}) {
		t.Errorf("now %v, want web-us 0.75, web-eu 0.25", now)
	}
	if len(p.Moves) != 1 || p.Moves[0].From != usID || p.Moves[0].To != f.pool || p.Moves[0].Share < 0.7499 || p.Moves[0].Share > 0.7501 ||
		p.Summary != "this edit moves 75 % of real answers from pool web-us to pool web-eu" {
		t.Errorf("moves %+v, summary %q", p.Moves, p.Summary)
	}
	for _, c := range []struct {
		body map[string]any
		path string
	}{
		{map[string]any{"sample": "real", "clients": []map[string]any{{"region": "WEU"}}}, "clients"},
		{map[string]any{"sample": "everyone"}, "sample"},
	} {
		if p := e.do("POST", path, c.body).problem(t, http.StatusBadRequest); !fieldPaths(p)[c.path] {
			t.Errorf("%v: %+v, want an error at %s", c.body, p.Errors, c.path)
		}
	}
}
