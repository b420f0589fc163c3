package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/pools"
)

// message returns the problem's message at path, or fails.
func message(t *testing.T, p api.Problem, path string) string {
	t.Helper()
	for _, fe := range p.Errors {
		if fe.Path == path {
			return fe.Message
		}
	}
	t.Fatalf("no error at %s: %v", path, p.Errors)
	return ""
}

// A typo is refused where it is made, in words that name the value and
// the likely intent, wherever a country, region or address is accepted.
func TestTyposRefusedWithTheirFieldAndValue(t *testing.T) {
	t.Parallel()
	e := previewEnv(t, nil)
	f := e.fixture()

	body := poolBody("")
	body["origins"] = []map[string]any{{"name": "a", "address": "999.1.1.1"}}
	p := e.do("POST", "/api/v1/pools", body).problem(t, http.StatusBadRequest)
	if msg := message(t, p, "origins[0].address"); !strings.Contains(msg, `"999.1.1.1" is not an IPv4 address`) {
		t.Errorf("origin 999.1.1.1: %q", msg)
	}

	lb := lbBody(f.zone, f.pool)
	lb["name"] = "geo.glb.example.com"
	lb["country_pools"] = map[string]any{"UK": []string{f.pool}}
	lb["region_pools"] = map[string]any{"weu": []string{f.pool}}
	p = e.do("POST", "/api/v1/load_balancers", lb).problem(t, http.StatusBadRequest)
	if msg := message(t, p, "country_pools.UK"); !strings.Contains(msg, `"UK" is not an ISO 3166-1 alpha-2 country code; did you mean "GB"?`) {
		t.Errorf("country_pools UK: %q", msg)
	}
	if msg := message(t, p, "region_pools.weu"); !strings.Contains(msg, `did you mean "WEU"?`) {
		t.Errorf("region_pools weu: %q", msg)
	}

	n := networkBody("198.51.100.0/24")
	n["country"] = "UK"
	p = e.do("POST", "/api/v1/networks", n).problem(t, http.StatusBadRequest)
	if msg := message(t, p, "country"); !strings.Contains(msg, `did you mean "GB"?`) {
		t.Errorf("network country UK: %q", msg)
	}
	p = e.do("POST", "/api/v1/networks", networkBody("198.51.100.0/33")).problem(t, http.StatusBadRequest)
	if msg := message(t, p, "cidr"); !strings.Contains(msg, `"198.51.100.0/33"`) || strings.Contains(msg, "netip") {
		t.Errorf("network cidr /33: %q", msg)
	}

	p = e.do("POST", "/api/v1/load_balancers/"+f.lb+"/preview", map[string]any{
		"clients": []map[string]any{{"country": "UK"}, {"region": "FR"}}}).problem(t, http.StatusBadRequest)
	if msg := message(t, p, "clients[0].country"); !strings.Contains(msg, `did you mean "GB"?`) {
		t.Errorf("preview country UK: %q", msg)
	}
	if msg := message(t, p, "clients[1].region"); !strings.Contains(msg, `"FR" is a country, not a region`) {
		t.Errorf("preview region FR: %q", msg)
	}

	body = poolBody("")
	body["minimum_origins"] = 4
	p = e.do("POST", "/api/v1/pools", body).problem(t, http.StatusBadRequest)
	if msg := message(t, p, "minimum_origins"); !strings.Contains(msg, "could never be healthy") {
		t.Errorf("minimum_origins 4 of 3: %q", msg)
	}
	if n := total(t, e, pools.KindNetwork); n != 1 {
		t.Errorf("%d networks stored, want only the fixture's", n)
	}
}

// An origin that no monitor checks reads not_checked, never up.
func TestUnmonitoredOriginsNotChecked(t *testing.T) {
	e := parallelEnv(t, nil)
	id := e.create(pools.KindPool, poolBody(""))["id"].(string)
	var got struct{ Result api.PoolHealth }
	e.do("GET", "/api/v1/pools/"+id+"/health", nil).json(t, &got)
	for _, o := range got.Result.Origins {
		if o.State != api.StateNotChecked {
			t.Errorf("origin %s of a pool without a monitor: state %q", o.Name, o.State)
		}
	}
}

// The default steering policy has one name: the API returns off (or geo
// with a geo map) for a load balancer created without one or with "",
// as old files and Cloudflare's clients send, and PATCH null asks again.
func TestSteeringOffHasOneName(t *testing.T) {
	e, f := parallelFixture(t)
	var got struct{ Result map[string]any }
	e.do("GET", "/api/v1/load_balancers/"+f.lb, nil).json(t, &got)
	if got.Result["steering_policy"] != "off" {
		t.Errorf("created without a policy: steering_policy %q, want off", got.Result["steering_policy"])
	}
	lb := lbBody(f.zone, f.pool)
	lb["name"], lb["steering_policy"] = "geo.glb.example.com", ""
	lb["region_pools"] = map[string]any{"WEU": []string{f.pool}}
	if p := e.create(pools.KindLoadBalancer, lb)["steering_policy"]; p != "geo" {
		t.Errorf(`created with "" and a region map: steering_policy %q, want geo`, p)
	}
	r := e.do("PATCH", "/api/v1/load_balancers/"+f.lb, map[string]any{"steering_policy": nil, "country_pools": map[string]any{"GB": []string{f.pool}}})
	got.Result = nil
	r.json(t, &got)
	if r.status != http.StatusOK || got.Result["steering_policy"] != "geo" {
		t.Errorf("PATCH null with a country map: %d steering_policy %q, want geo", r.status, got.Result["steering_policy"])
	}
}

// An address that looks like an IP but is not one (a letter among the
// digits, a port, a scheme, spaces) is refused with what is wrong with it,
// on create and on replace, and nothing is stored: 127.0.0.1O is not
// answered as CNAME 127.0.0.1o.
func TestAddressesThatLookLikeIPsRefused(t *testing.T) {
	e := parallelEnv(t, nil)
	before := total(t, e, pools.KindPool)
	for addr, want := range map[string]string{
		"127.0.0.1O":       `"127.0.0.1O" is not an IPv4 address: it has a letter among its numbers`,
		"127.0.0.2:18001":  `"127.0.0.2:18001" has a port (:18001); give the address alone ("127.0.0.2")`,
		"http://127.0.0.2": `"http://127.0.0.2" is a URL; give the address alone ("127.0.0.2"), without http://`,
		" 127.0.0.2 ":      `" 127.0.0.2 " has spaces around it; send "127.0.0.2"`,
	} {
		body := poolBody("")
		body["origins"] = []map[string]any{{"name": "a", "address": addr}}
		p := e.do("POST", "/api/v1/pools", body).problem(t, http.StatusBadRequest)
		if msg := message(t, p, "origins[0].address"); !strings.HasPrefix(msg, want) {
			t.Errorf("address %q: %q, want it to start with %q", addr, msg, want)
		}
	}
	if n := total(t, e, pools.KindPool); n != before {
		t.Errorf("%d pools stored, want %d", n, before)
	}
}
