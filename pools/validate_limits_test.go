package pools

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestValidationLimitsAtTheirEdges: every numeric limit accepts its
// bounds and refuses one step past them, so an off-by-one in a
// comparison fails here.
func TestValidationLimitsAtTheirEdges(t *testing.T) {
	t.Parallel()
	origins := func(n int) []Origin {
		out := make([]Origin, n)
		for i := range out {
			out[i] = DefaultOrigin()
			out[i].Name, out[i].Address = fmt.Sprintf("o%d", i), fmt.Sprintf("192.0.2.%d", i+1)
		}
		return out
	}
	pool := func(edit func(*Pool)) Object {
		p := DefaultPool()
		p.Name, p.Origins = "p", origins(1)
		edit(&p)
		return &p
	}
	lb := func(edit func(*LoadBalancer)) Object {
		l := DefaultLoadBalancer()
		l.Zone, l.Name, l.DefaultPools, l.FallbackPool = "z", "www.glb.example.com", []string{"p1"}, "p1"
		edit(&l)
		return &l
	}
	monitor := func(edit func(*Monitor)) Object {
		m := DefaultMonitor()
		edit(&m)
		return &m
	}
	f := func(v float64) *float64 { return &v }
	ids := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("p%d", i)
		}
		return out
	}
	many := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "p1"
		}
		return out
	}
	for _, c := range []struct {
		name  string
		obj   Object
		field string // "" when valid
	}{
		{"64 origins", pool(func(p *Pool) { p.Origins = origins(MaxOriginsPerPool) }), ""},
		{"65 origins", pool(func(p *Pool) { p.Origins = origins(MaxOriginsPerPool + 1) }), "origins"},
		{"weight 0", pool(func(p *Pool) { p.Origins[0].Weight = 0 }), ""},
		{"weight 1", pool(func(p *Pool) { p.Origins[0].Weight = 1 }), ""},
		{"weight over 1", pool(func(p *Pool) { p.Origins[0].Weight = 1.001 }), "origins[0].weight"},
		{"latitude ±90", pool(func(p *Pool) { p.Latitude, p.Longitude = f(-90), f(180) }), ""},
		{"latitude 90", pool(func(p *Pool) { p.Latitude, p.Longitude = f(90), f(-180) }), ""},
		{"latitude past 90", pool(func(p *Pool) { p.Latitude, p.Longitude = f(90.01), f(0) }), "latitude"},
		{"longitude past -180", pool(func(p *Pool) { p.Latitude, p.Longitude = f(0), f(-180.01) }), "longitude"},
		{"minimum_origins 1", pool(func(p *Pool) { p.MinimumOrigins = 1 }), ""},

		{"answers 0", lb(func(l *LoadBalancer) { l.Answers = 0 }), ""},
		{"answers 64", lb(func(l *LoadBalancer) { l.Answers = MaxOriginsPerPool }), ""},
		{"answers 65", lb(func(l *LoadBalancer) { l.Answers = MaxOriginsPerPool + 1 }), "answers"},
		{"answers -1", lb(func(l *LoadBalancer) { l.Answers = -1 }), "answers"},
		{"ttl 1", lb(func(l *LoadBalancer) { l.TTL = 1 }), ""},
		{"ttl 86400", lb(func(l *LoadBalancer) { l.TTL = 86400 }), ""},
		{"ttl 0", lb(func(l *LoadBalancer) { l.TTL = 0 }), "ttl"},
		{"ttl 86401", lb(func(l *LoadBalancer) { l.TTL = 86401 }), "ttl"},
		{"64 default pools", lb(func(l *LoadBalancer) { l.DefaultPools = many(MaxPoolsPerList) }), ""},
		{"65 default pools", lb(func(l *LoadBalancer) { l.DefaultPools = many(MaxPoolsPerList + 1) }), "default_pools"},
		{"65 region pools", lb(func(l *LoadBalancer) { l.RegionPools = map[string][]string{"WEU": many(MaxPoolsPerList + 1)} }), "region_pools.WEU"},
		{"spillover ratio 1", lb(func(l *LoadBalancer) { l.ZonalAffinity.SpilloverRatio = 1 }), ""},
		{"https empty", lb(func(l *LoadBalancer) { l.HTTPS = &HTTPSRecord{} }), ""},
		{"https port 1", lb(func(l *LoadBalancer) { l.HTTPS = &HTTPSRecord{Port: 1} }), ""},
		{"https port 65535", lb(func(l *LoadBalancer) { l.HTTPS = &HTTPSRecord{Port: 65535} }), ""},
		{"https port 65536", lb(func(l *LoadBalancer) { l.HTTPS = &HTTPSRecord{Port: 65536} }), "https.port"},
		{"https port -1", lb(func(l *LoadBalancer) { l.HTTPS = &HTTPSRecord{Port: -1} }), "https.port"},
		{"https alpn", lb(func(l *LoadBalancer) {
			l.HTTPS = &HTTPSRecord{ALPN: []string{"h2", "h3", "http/1.1"}, NoDefaultALPN: true}
		}), ""},
		{"https alpn 255 bytes", lb(func(l *LoadBalancer) { l.HTTPS = &HTTPSRecord{ALPN: []string{strings.Repeat("a", 255)}} }), ""},
		{"https alpn 256 bytes", lb(func(l *LoadBalancer) { l.HTTPS = &HTTPSRecord{ALPN: []string{strings.Repeat("a", 256)}} }), "https.alpn[0]"},
		{"https alpn empty id", lb(func(l *LoadBalancer) { l.HTTPS = &HTTPSRecord{ALPN: []string{"h2", ""}} }), "https.alpn[1]"},
		{"https alpn comma", lb(func(l *LoadBalancer) { l.HTTPS = &HTTPSRecord{ALPN: []string{"h2,h3"}} }), "https.alpn[0]"},
		{"https alpn space", lb(func(l *LoadBalancer) { l.HTTPS = &HTTPSRecord{ALPN: []string{"h 2"}} }), "https.alpn[0]"},
		{"https alpn twice", lb(func(l *LoadBalancer) { l.HTTPS = &HTTPSRecord{ALPN: []string{"h2", "h2"}} }), "https.alpn[1]"},
		{"https 16 alpn", lb(func(l *LoadBalancer) { l.HTTPS = &HTTPSRecord{ALPN: ids(MaxHTTPSALPN)} }), ""},
		{"https 17 alpn", lb(func(l *LoadBalancer) { l.HTTPS = &HTTPSRecord{ALPN: ids(MaxHTTPSALPN + 1)} }), "https.alpn"},
		{"https no-default-alpn alone", lb(func(l *LoadBalancer) { l.HTTPS = &HTTPSRecord{NoDefaultALPN: true} }), "https.no_default_alpn"},
		{"https ech", lb(func(l *LoadBalancer) { l.HTTPS = &HTTPSRecord{ECH: "AEX+DQBB"} }), ""},
		{"https ech not base64", lb(func(l *LoadBalancer) { l.HTTPS = &HTTPSRecord{ECH: "not base64!"} }), "https.ech"},
		{"https ech too long", lb(func(l *LoadBalancer) {
			l.HTTPS = &HTTPSRecord{ECH: base64.StdEncoding.EncodeToString(make([]byte, MaxHTTPSECHLen+1))}
		}), "https.ech"},

		{"port 65535", monitor(func(m *Monitor) { m.Port = 65535 }), ""},
		{"port 65536", monitor(func(m *Monitor) { m.Port = 65536 }), "port"},
		{"port -1", monitor(func(m *Monitor) { m.Port = -1 }), "port"},
		{"retries 5", monitor(func(m *Monitor) { m.Retries, m.Timeout, m.Interval = 5, 1, 60 }), ""},
		{"retries 6", monitor(func(m *Monitor) { m.Retries, m.Timeout, m.Interval = 6, 1, 60 }), "retries"},
		{"retries -1", monitor(func(m *Monitor) { m.Retries = -1 }), "retries"},
		{"timeout 1", monitor(func(m *Monitor) { m.Timeout = 1 }), ""},
		{"timeout 0", monitor(func(m *Monitor) { m.Timeout = 0 }), "timeout"},
		{"interval 1", monitor(func(m *Monitor) { m.Interval, m.Timeout, m.Retries = 1, 1, 0 }), ""},
		{"interval 0", monitor(func(m *Monitor) { m.Interval = 0 }), "interval"},
		{"checks fill 10 intervals", monitor(func(m *Monitor) { m.Interval, m.Timeout, m.Retries = 2, 10, 1 }), ""},
		{"checks past 10 intervals", monitor(func(m *Monitor) { m.Interval, m.Timeout, m.Retries = 2, 7, 2 }), "timeout"},
		{"consecutive_up 0", monitor(func(m *Monitor) { m.ConsecutiveUp = 0 }), ""},
		{"consecutive_down -1", monitor(func(m *Monitor) { m.ConsecutiveDown = -1 }), "consecutive_down"},
		{"expected 1xx", monitor(func(m *Monitor) { m.ExpectedCodes = "1xx" }), ""},
		{"expected 5xx", monitor(func(m *Monitor) { m.ExpectedCodes = "5xx" }), ""},
		{"expected 6xx", monitor(func(m *Monitor) { m.ExpectedCodes = "6xx" }), "expected_codes"},
		{"expected 0xx", monitor(func(m *Monitor) { m.ExpectedCodes = "0xx" }), "expected_codes"},
	} {
		err := c.obj.Validate(refs{})
		got := map[string]bool{}
		var ve *ValidationError
		if errors.As(err, &ve) {
			for _, fe := range ve.Errors {
				got[fe.Path] = true
			}
		} else if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		switch {
		case c.field == "" && len(got) > 0:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.field != "" && (!got[c.field] || len(got) != 1):
			t.Errorf("%s: errors %v, want exactly %s", c.name, err, c.field)
		}
	}
}
