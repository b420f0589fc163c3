package api_test

import (
	"context"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/geodata"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

// TestRUMView: GET /load_balancers/{id}/rum shows the served RUM table's
// figures for the load balancer's pools, per region, country and
// network, fastest first, and a preview of the same load balancer ranks
// by them; a bad limit or an unknown parameter is a 400 naming it.
func TestRUMView(t *testing.T) {
	t.Parallel()
	var e *env
	var table func(fast, slow string) *steering.Measurements
	e = newEnv(t, func(o *api.Options) {
		o.Snapshot = func() (*steering.Snapshot, steering.Locator) {
			cfg, err := e.store.Config(context.Background())
			if err != nil {
				t.Errorf("config: %v", err)
				return nil, nil
			}
			var m *steering.Measurements
			if table != nil && len(cfg.Pools) == 2 {
				m = table(cfg.Pools[1].ID, cfg.Pools[0].ID)
			}
			snap, err := steering.CompileFor(cfg, nil, steering.Options{Measured: m})
			if err != nil {
				t.Errorf("compile: %v", err)
				return nil, nil
			}
			return snap, geodata.Locator{}
		}
	})
	f := e.fixture()
	other := e.anotherPool(f, "web-us")
	e.setDefaultPools(f.lb, f.pool, other)
	path := "/api/v1/load_balancers/" + f.lb + "/rum"

	var got struct{ Result api.RUMView }
	r := e.do("GET", path, nil)
	if r.status != http.StatusOK {
		t.Fatalf("rum without a table: %d %s", r.status, r.body)
	}
	r.json(t, &got)
	if got.Result.Table.Built != nil || len(got.Result.Table.Regions) != 0 || len(got.Result.Table.Pools) != 2 || got.Result.Table.MinSamples != pools.DefaultRUMMinSamples {
		t.Errorf("no table: %+v", got.Result.Table)
	}

	if r := e.do("PATCH", "/api/v1/load_balancers/"+f.lb, map[string]any{"steering_policy": "measured_latency",
		"rum": map[string]any{"site_keys": []string{"site-key-1"}, "min_samples": 10}}); r.status != http.StatusOK {
		t.Fatalf("patch: %d %s", r.status, r.body)
	}
	fig := func(pool string, med float64, n int) steering.MeasuredPool {
		return steering.MeasuredPool{Pool: pool, MedianMs: med, P75Ms: med * 1.5, Samples: n}
	}
	// other (the second pool) is faster everywhere but at 198.51.100.0/24.
	table = func(fast, slow string) *steering.Measurements {
		return &steering.Measurements{
			Networks: []steering.MeasuredGroup{
				{Prefix: netip.MustParsePrefix("198.51.100.0/24"), Pools: []steering.MeasuredPool{fig(fast, 90, 40), fig(slow, 30, 40)}},
				{Prefix: netip.MustParsePrefix("203.0.113.0/24"), Pools: []steering.MeasuredPool{fig(fast, 20, 12), fig(slow, 70, 12)}},
			},
			ASNs: []steering.MeasuredGroup{
				{ASN: 64500, Pools: []steering.MeasuredPool{fig(fast, 35, 30), fig(slow, 50, 30)}},
				{ASN: 4200000000, Pools: []steering.MeasuredPool{fig(fast, 35, 11)}},
			},
			Countries: []steering.MeasuredGroup{{Key: "DE", Pools: []steering.MeasuredPool{fig(fast, 25, 50), fig(slow, 40, 50)}}},
			Regions:   []steering.MeasuredGroup{{Key: "WEU", Pools: []steering.MeasuredPool{fig(fast, 28, 80), fig(slow, 45, 5)}}},
			Built:     time.Unix(1_800_000_000, 0).UTC(), Window: 15 * time.Minute,
		}
	}
	r = e.do("GET", path+"?limit=1", nil)
	if r.status != http.StatusOK {
		t.Fatalf("rum: %d %s", r.status, r.body)
	}
	r.json(t, &got)
	tab := got.Result.Table
	if got.Result.SteeringPolicy != "measured_latency" || tab.MinSamples != 10 || tab.Window != "15m0s" || tab.Built == nil {
		t.Errorf("view %+v", got.Result)
	}
	if len(tab.Regions) != 1 || tab.Regions[0].Group != "WEU" || tab.Regions[0].Fastest != "" ||
		tab.Regions[0].Pools[0].Pool != other || tab.Regions[0].Pools[0].MedianMs != 28 || tab.Regions[0].Pools[0].P75Ms != 42 ||
		tab.Regions[0].Pools[1].Counted {
		t.Errorf("regions %+v: want no fastest (the second pool has 5 samples of 10)", tab.Regions)
	}
	if len(tab.Countries) != 1 || tab.Countries[0].Group != "DE" || tab.Countries[0].Region != "WEU" || tab.Countries[0].Fastest != other || tab.Countries[0].Samples != 100 {
		t.Errorf("countries %+v", tab.Countries)
	}
	if tab.ASNsTotal != 2 || len(tab.ASNs) != 1 || tab.ASNs[0].Group != "AS64500" || tab.ASNs[0].ASN != 64500 ||
		tab.ASNs[0].Fastest != other || tab.ASNs[0].Samples != 60 {
		t.Errorf("asns (limit 1) %+v of %d", tab.ASNs, tab.ASNsTotal)
	}
	if tab.NetworksTotal != 2 || len(tab.Networks) != 1 || tab.Networks[0].Group != "198.51.100.0/24" || tab.Networks[0].Fastest != f.pool {
		t.Errorf("networks (limit 1) %+v of %d", tab.Networks, tab.NetworksTotal)
	}

	// The preview ranks by the same figures.
	var pv struct{ Result api.Preview }
	r = e.do("POST", "/api/v1/load_balancers/"+f.lb+"/preview", map[string]any{"clients": []map[string]any{
		{"subnet": "198.51.100.0/24"}, {"country": "DE"}, {"country": "DE"}, {"country": "DE"}}})
	if r.status != http.StatusOK {
		t.Fatalf("preview: %d %s", r.status, r.body)
	}
	r.json(t, &pv)
	if sh := pv.Result.Now.ByName(); sh["web-eu"] != 0.25 || sh["web-us"] != 0.75 {
		t.Errorf("preview shares %v, want web-eu 0.25 (198.51.100.0/24's fastest) and web-us 0.75 (DE's)", sh)
	}
	for _, o := range pv.Result.Now.Orders {
		if p := o.Pools[0]; p.MeasuredMs == nil || (o.Share == 0.75) != (*p.MeasuredMs == 25) {
			t.Errorf("order %+v: the first pool's measured_ms is not the median that ranked it", o)
		}
	}

	for q, field := range map[string]string{"?limit=0": "limit", "?limit=x": "limit", "?limit=1001": "limit", "?level=region": "level"} {
		if p := e.do("GET", path+q, nil).problem(t, http.StatusBadRequest); !fieldPaths(p)[field] {
			t.Errorf("%s: problem %+v does not name %s", q, p, field)
		}
	}
	e.do("GET", "/api/v1/load_balancers/nope/rum", nil).problem(t, http.StatusNotFound)
}
