package pools

import (
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"
)

// refs is a fixed world for reference checks.
type refs struct{}

func (refs) ZoneName(id string) (string, bool) {
	if id == "z" {
		return "glb.example.com", true
	}
	return "", false
}
func (refs) PoolExists(id string) bool    { return id == "p1" || id == "p2" }
func (refs) MonitorExists(id string) bool { return id == "m" }

// paths returns the sorted field paths of a validation error.
func paths(t *testing.T, err error) []string {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v is not a *ValidationError", err)
	}
	var out []string
	for _, fe := range ve.Errors {
		if fe.Message == "" {
			t.Errorf("%s has no message", fe.Path)
		}
		out = append(out, fe.Path)
	}
	sort.Strings(out)
	return out
}

func decode[T any](t *testing.T, s string) *T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return &v
}

func TestPoolErrorsReportedTogether(t *testing.T) {
	p := decode[Pool](t, `{
		"name": "", "minimum_origins": 0, "monitor": "nope", "check_regions": ["WEU", "MARS"],
		"latitude": 95, "origin_steering": {"policy": "roundrobin"},
		"origins": [
			{"name": "a", "address": "192.0.2.1", "weight": 1.5},
			{"name": "a", "address": "not an address!"},
			{"name": "", "address": "2001:db8::1", "weight": -0.1, "header": {"X-Foo": ["bar"]}}
		]}`)
	want := []string{"check_regions[1]", "latitude", "minimum_origins", "monitor", "name",
		"origin_steering.policy", "origins[0].weight", "origins[1].address", "origins[1].name",
		"origins[2].header", "origins[2].name", "origins[2].weight"}
	if got := paths(t, p.Validate(refs{})); !slices.Equal(got, want) {
		t.Errorf("pool errors\n got %v\nwant %v", got, want)
	}
}

func TestLoadBalancerErrorsReportedTogether(t *testing.T) {
	l := decode[LoadBalancer](t, `{
		"zone": "z", "name": "www.other.example", "ttl": 0, "steering_policy": "nearest",
		"default_pools": ["p1", "gone"], "region_pools": {"MARS": ["p1"], "WEU": ["gone"]},
		"country_pools": {"usa": ["p2"]}, "random_steering": {"default_weight": 2},
		"location_strategy": {"prefer_ecs": "sometimes"},
		"zonal_affinity": {"spillover": "ZONAL_AFFINITY_MAYBE", "spillover_ratio": 1.2},
		"answers": -1}`)
	want := []string{"answers", "country_pools.usa", "default_pools[1]", "fallback_pool",
		"location_strategy.prefer_ecs", "name", "random_steering.default_weight", "region_pools.MARS",
		"region_pools.WEU[0]", "steering_policy", "ttl", "zonal_affinity.spillover", "zonal_affinity.spillover_ratio"}
	if got := paths(t, l.Validate(refs{})); !slices.Equal(got, want) {
		t.Errorf("load balancer errors\n got %v\nwant %v", got, want)
	}
	ok := decode[LoadBalancer](t, `{"zone": "z", "name": "WWW.glb.example.com.", "default_pools": ["p1"], "fallback_pool": "p2"}`)
	if err := ok.Validate(refs{}); err != nil {
		t.Errorf("valid load balancer rejected: %v", err)
	}
}

func TestMonitorZoneNetworkErrors(t *testing.T) {
	m := decode[Monitor](t, `{"type": "http", "path": "health", "expected_codes": "2x0", "timeout": 0, "interval": 0, "retries": 9, "consecutive_down": -1}`)
	if got, want := paths(t, m.Validate(nil)), []string{"consecutive_down", "expected_codes", "interval", "path", "retries", "timeout"}; !slices.Equal(got, want) {
		t.Errorf("monitor errors\n got %v\nwant %v", got, want)
	}
	if got, want := paths(t, decode[Monitor](t, `{"type": "tcp"}`).Validate(nil)), []string{"port"}; !slices.Equal(got, want) {
		t.Errorf("tcp monitor without port: %v", got)
	}
	z := decode[Zone](t, `{"name": "glb..example.com", "nameservers": [], "records": [
		{"name": "www.elsewhere.org", "type": "A", "content": "192.0.2.1"},
		{"name": "mx.glb.example.com", "type": "MX", "content": "ten mail.example.com"},
		{"name": "x.glb.example.com", "type": "NAPTR2", "content": "100 10 \"u\" \"\" \"\" ."},
		{"name": "v6.glb.example.com", "type": "AAAA", "content": "192.0.2.1"}]}`)
	if got, want := paths(t, z.Validate(nil)), []string{"name", "nameservers", "records[1].content", "records[2].type", "records[3].content"}; !slices.Equal(got, want) {
		// records[0] is outside a zone whose own name is invalid: only the name is reported.
		t.Errorf("zone errors\n got %v\nwant %v", got, want)
	}
	n := decode[Network](t, `{"cidr": "10.1.2.3/8", "region": "Mars", "country": "fr", "latitude": 10}`)
	if got, want := paths(t, n.Validate(nil)), []string{"cidr", "country", "latitude", "region"}; !slices.Equal(got, want) {
		t.Errorf("network errors\n got %v\nwant %v", got, want)
	}
}

func TestDefaultsAndStrictDecoding(t *testing.T) {
	p := decode[Pool](t, `{"name": "p", "origins": [{"name": "a", "address": "192.0.2.1"}, {"name": "b", "address": "192.0.2.2", "weight": 0, "enabled": false}]}`)
	if !p.Enabled || p.MinimumOrigins != 1 || p.OriginSteering.Policy != OriginRandom {
		t.Errorf("pool defaults: %+v", p)
	}
	if o := p.Origins[0]; !o.Enabled || o.Weight != 1 {
		t.Errorf("origin defaults: %+v", o)
	}
	if o := p.Origins[1]; o.Enabled || o.Weight != 0 {
		t.Errorf("explicit zeros must stay: %+v", o)
	}
	l := decode[LoadBalancer](t, `{}`)
	if l.TTL != 30 || l.Answers != 1 || !l.Enabled || l.ZonalAffinity.Spillover != AffinityDisabled ||
		l.LocationStrategy.PreferECS != PreferECSAuto || l.RandomSteering.DefaultWeight != 1 {
		t.Errorf("load balancer defaults: %+v", l)
	}
	m := decode[Monitor](t, `{}`)
	if m.Type != MonitorHTTP || m.Interval != 60 || m.Timeout != 5 || m.Retries != 2 || m.ExpectedCodes != "200" || m.Method != "GET" {
		t.Errorf("monitor defaults: %+v", m)
	}
	var bad Pool
	if err := json.Unmarshal([]byte(`{"name": "p", "origins": [{"name": "a", "adress": "192.0.2.1"}]}`), &bad); err == nil {
		t.Errorf("a misspelt nested field was accepted")
	}
}

// An owner label is free but bounded, and kept through a JSON round trip
// on every object that has one.
func TestOwnerLabels(t *testing.T) {
	long := strings.Repeat("x", MaxOwnerLen+1)
	p := decode[Pool](t, `{"name": "p", "owner": "`+long+`", "origins": [
		{"name": "a", "address": "192.0.2.1", "owner": "external-dns:eu"},
		{"name": "b", "address": "192.0.2.2", "owner": "bad\u0001owner"}]}`)
	if got, want := paths(t, p.Validate(refs{})), []string{"origins[1].owner", "owner"}; !slices.Equal(got, want) {
		t.Errorf("pool errors at %v, want %v", got, want)
	}
	l := decode[LoadBalancer](t, `{"zone": "z", "name": "www.glb.example.com", "default_pools": ["p1"], "fallback_pool": "p1", "owner": "`+long+`"}`)
	if got, want := paths(t, l.Validate(refs{})), []string{"owner"}; !slices.Equal(got, want) {
		t.Errorf("load balancer errors at %v, want %v", got, want)
	}
	z := decode[Zone](t, `{"name": "glb.example.com", "nameservers": ["ns1.example.net"],
		"records": [{"name": "a.glb.example.com", "type": "A", "content": "192.0.2.1", "owner": "`+long+`"}]}`)
	if got, want := paths(t, z.Validate(refs{})), []string{"records[0].owner"}; !slices.Equal(got, want) {
		t.Errorf("zone errors at %v, want %v", got, want)
	}
	ok := decode[Pool](t, `{"name": "p", "owner": "external-dns:eu", "origins": [{"name": "a", "address": "192.0.2.1", "owner": "external-dns:eu"}]}`)
	if err := ok.Validate(refs{}); err != nil {
		t.Fatalf("valid owners refused: %v", err)
	}
	b, _ := json.Marshal(ok)
	back := decode[Pool](t, string(b))
	if back.Owner != "external-dns:eu" || back.Origins[0].Owner != "external-dns:eu" {
		t.Errorf("owners lost in a round trip: %s", b)
	}
	b, _ = json.Marshal(decode[Pool](t, `{"name": "p", "origins": [{"name": "a", "address": "192.0.2.1"}]}`))
	if strings.Contains(string(b), "owner") {
		t.Errorf("an object without owner shows one: %s", b)
	}
}

// TestZoneSOADefaults: a zone created without SOA timers gets the ones
// RFC 1912 and Zonemaster recommend (refresh 14400, retry 3600); one
// that gives its own, or a stored one, keeps them.
func TestZoneSOADefaults(t *testing.T) {
	z := decode[Zone](t, `{"name": "glb.example.com", "nameservers": ["ns1.example.com"]}`)
	if got := z.SOA; got.Refresh != 14400 || got.Retry != 3600 || got.Expire != 604800 || got.Minimum != 300 {
		t.Errorf("default SOA timers %+v, want refresh 14400, retry 3600, expire 604800, minimum 300", got)
	}
	z = decode[Zone](t, `{"name": "glb.example.com", "nameservers": ["ns1.example.com"], "soa": {"refresh": 10000, "retry": 2400}}`)
	if got := z.SOA; got.Refresh != 10000 || got.Retry != 2400 {
		t.Errorf("stored SOA timers %+v, want 10000 and 2400 kept", got)
	}
}
