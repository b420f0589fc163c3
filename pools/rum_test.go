package pools

import (
	"slices"
	"testing"
)

// RUM settings are checked field by field, each named.
func TestRUMValidation(t *testing.T) {
	p := decode[Pool](t, `{"name":"p","minimum_origins":1,"origin_steering":{"policy":"random"},
		"origins":[{"name":"a","address":"192.0.2.1","enabled":true,"weight":1}],"rum":{"probe_url":"ftp://x.example/rum.gif"}}`)
	if got := paths(t, p.Validate(nil)); !slices.Equal(got, []string{"rum.probe_url"}) {
		t.Errorf("pool: %v", got)
	}
	p.RUM.ProbeURL = "https://pool.example.net/rum.gif?x=1"
	if err := p.Validate(nil); err != nil {
		t.Errorf("good probe_url refused: %v", err)
	}
	l := decode[LoadBalancer](t, `{"zone":"z","name":"www.glb.example.com","ttl":30,"steering_policy":"measured_latency",
		"default_pools":["p1"],"fallback_pool":"p1","location_strategy":{"prefer_ecs":"auto"},
		"zonal_affinity":{"spillover":"ZONAL_AFFINITY_DISABLED"},"answers":1,
		"rum":{"site_keys":["short","good-key-1"],"allowed_origins":["https://www.example.com/","https://ok.example.com","HTTPS://UP.example.com"],"min_samples":-1}}`)
	want := []string{"rum.allowed_origins[0]", "rum.allowed_origins[2]", "rum.min_samples", "rum.site_keys[0]"}
	if got := paths(t, l.Validate(refs{})); !slices.Equal(got, want) {
		t.Errorf("load balancer: %v, want %v", got, want)
	}
	l.RUM = &LoadBalancerRUM{SiteKeys: []string{"good-key-1"}, AllowedOrigins: []string{"https://www.example.com"}}
	if err := l.Validate(refs{}); err != nil {
		t.Errorf("good rum refused: %v", err)
	}
	if l.RUMMinSamples() != DefaultRUMMinSamples || !l.RUM.AllowsOrigin("https://www.example.com") || l.RUM.AllowsOrigin("https://evil.example.com") {
		t.Errorf("defaults or origin check wrong")
	}
	l.SteeringPolicy = "measured"
	if got := paths(t, l.Validate(refs{})); !slices.Equal(got, []string{"steering_policy"}) {
		t.Errorf("bad policy: %v", got)
	}
}
