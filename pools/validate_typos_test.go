package pools

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// problem returns the message of the one error at path, or fails.
func problem(t *testing.T, err error, path string) string {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("want an error at %s, got %v", path, err)
	}
	for _, fe := range ve.Errors {
		if fe.Path == path {
			return fe.Message
		}
	}
	t.Fatalf("no error at %s in %v", path, ve.Errors)
	return ""
}

func TestTypoAddressesRefused(t *testing.T) {
	for _, tc := range []struct{ address, want string }{
		{"999.1.1.1", `"999.1.1.1" is not an IPv4 address`},
		{"192.0.2.1.", `"192.0.2.1." is not an IPv4 address`},
		{"192.0.2", `"192.0.2" is not an IPv4 address`},
		{"10.0.0.256", `"10.0.0.256" is not an IPv4 address`},
		{"2001:db8::g", `"2001:db8::g" is not an IPv6 address`},
		{"web.example.123", `"web.example.123" is not an IPv4 or IPv6 address or hostname: ends in an all-numeric label 123`},
		{"", "required"},
		{"127.0.0.1O", `"127.0.0.1O" is not an IPv4 address: it has a letter among its numbers`},
		{"l0.0.0.1", `"l0.0.0.1" is not an IPv4 address: it has a letter among its numbers`},
		{"127.0.0.2:18001", `"127.0.0.2:18001" has a port (:18001); give the address alone ("127.0.0.2")`},
		{"[2001:db8::1]:443", `"[2001:db8::1]:443" has a port (:443); give the address alone ("2001:db8::1")`},
		{"origin.example.com:8080", `"origin.example.com:8080" has a port (:8080); give the address alone ("origin.example.com")`},
		{"http://127.0.0.2", `"http://127.0.0.2" is a URL; give the address alone ("127.0.0.2"), without http://`},
		{"https://origin.example.com/", `"https://origin.example.com/" is a URL; give the address alone ("origin.example.com"), without https://`},
		{" 127.0.0.2 ", `" 127.0.0.2 " has spaces around it; send "127.0.0.2"`},
		{"\t127.0.0.1O", `"127.0.0.1O" is not an IPv4 address: it has a letter`},
		{"   ", "required"},
	} {
		p := decode[Pool](t, `{"name": "p", "origins": [{"name": "a", "address": "192.0.2.1"}]}`)
		p.Origins[0].Address = tc.address
		if msg := problem(t, p.Validate(nil), "origins[0].address"); !strings.HasPrefix(msg, tc.want) {
			t.Errorf("address %q: %q, want it to start with %q", tc.address, msg, tc.want)
		}
	}
	for _, ok := range []string{"192.0.2.1", "2001:db8::1", "::ffff:192.0.2.1", "origin-1.example.com", "web.example.com.", "3com.com", "a1.b2", "2001:db8::1:80", "one.two.three.four", "a.b.c.io1"} {
		p := decode[Pool](t, `{"name": "p", "origins": [{"name": "a", "address": "192.0.2.1"}]}`)
		p.Origins[0].Address = ok
		if err := p.Validate(nil); err != nil {
			t.Errorf("address %q refused: %v", ok, err)
		}
	}
	// The same rule for every name, not only origins.
	z := decode[Zone](t, `{"name": "glb.example.com", "nameservers": ["192.0.2.53"], "records": [
		{"name": "www.glb.example.com", "type": "CNAME", "content": "10.0.0.1"}]}`)
	if got, want := paths(t, z.Validate(nil)), []string{"nameservers[0]", "records[0].content"}; !slices.Equal(got, want) {
		t.Errorf("zone with addresses for names: %v, want %v", got, want)
	}
}

func TestCountryAndRegionCodesChecked(t *testing.T) {
	l := decode[LoadBalancer](t, `{"zone": "z", "name": "www.glb.example.com", "default_pools": ["p1"], "fallback_pool": "p1",
		"country_pools": {"UK": ["p1"], "gb": ["p1"], "ZZ": ["p1"], "USA": ["p1"], "DE": ["p1"], "XK": ["p1"]},
		"region_pools": {"weu": ["p1"], "FR": ["p1"], "EU": ["p1"], "ENAM": ["p1"]}}`)
	err := l.Validate(refs{})
	if got, want := paths(t, err), []string{"country_pools.UK", "country_pools.USA", "country_pools.ZZ", "country_pools.gb",
		"region_pools.EU", "region_pools.FR", "region_pools.weu"}; !slices.Equal(got, want) {
		t.Errorf("errors at %v, want %v", got, want)
	}
	for path, want := range map[string]string{
		"country_pools.UK":  `"UK" is not an ISO 3166-1 alpha-2 country code; did you mean "GB"?`,
		"country_pools.gb":  `did you mean "GB"?`,
		"country_pools.ZZ":  `"ZZ" is not an ISO 3166-1 alpha-2 country code`,
		"country_pools.USA": "two-letter",
		"region_pools.weu":  `did you mean "WEU"?`,
		"region_pools.FR":   `"FR" is a country, not a region`,
		"region_pools.EU":   `unknown region "EU": one of WNAM, ENAM`,
	} {
		if msg := problem(t, err, path); !strings.Contains(msg, want) {
			t.Errorf("%s: %q, want it to contain %q", path, msg, want)
		}
	}

	n := decode[Network](t, `{"cidr": "198.51.100.0/24", "country": "UK", "region": "weu"}`)
	err = n.Validate(nil)
	if msg := problem(t, err, "country"); !strings.Contains(msg, `did you mean "GB"?`) {
		t.Errorf("network country UK: %q", msg)
	}
	if msg := problem(t, err, "region"); !strings.Contains(msg, `did you mean "WEU"?`) {
		t.Errorf("network region weu: %q", msg)
	}
	p := decode[Pool](t, `{"name": "p", "check_regions": ["Weu"], "origins": [{"name": "a", "address": "192.0.2.1"}]}`)
	if msg := problem(t, p.Validate(nil), "check_regions[0]"); !strings.Contains(msg, `did you mean "WEU"?`) {
		t.Errorf("check_regions Weu: %q", msg)
	}
	if !IsCountry("GB") || IsCountry("UK") || IsCountry("gb") || IsCountry("G") || len(CountryCodes()) != 250 {
		t.Errorf("IsCountry or the list of %d codes is wrong", len(CountryCodes()))
	}
}

func TestNetworkCIDRProblemsInOperatorWords(t *testing.T) {
	for cidr, want := range map[string]string{
		"10.0.0.0/33":   `"10.0.0.0/33": prefix length "33" is not a number in [0, 32]`,
		"10.0.0.0":      `"10.0.0.0" has no prefix length`,
		"999.0.0.0/8":   `"999.0.0.0/8": "999.0.0.0" is not an IPv4 or IPv6 address`,
		"2001:db8::/ab": `prefix length "ab" is not a number in [0, 128]`,
		"10.1.2.3/8":    `"10.1.2.3/8" has host bits set; did you mean 10.0.0.0/8?`,
	} {
		msg := problem(t, decode[Network](t, `{"cidr": "`+cidr+`"}`).Validate(nil), "cidr")
		if !strings.Contains(msg, want) || strings.Contains(msg, "netip") || strings.Contains(msg, "ParsePrefix") {
			t.Errorf("cidr %q: %q, want %q", cidr, msg, want)
		}
	}
}

func TestMinimumOriginsWithinEnabledOrigins(t *testing.T) {
	p := decode[Pool](t, `{"name": "p", "minimum_origins": 3, "origins": [
		{"name": "a", "address": "192.0.2.1"}, {"name": "b", "address": "192.0.2.2"}, {"name": "c", "address": "192.0.2.3", "enabled": false}]}`)
	msg := problem(t, p.Validate(nil), "minimum_origins")
	if !strings.Contains(msg, "3 is more than the 2 enabled origins") {
		t.Errorf("minimum_origins 3 of 2 enabled: %q", msg)
	}
	p.MinimumOrigins = 2
	if err := p.Validate(nil); err != nil {
		t.Errorf("minimum_origins 2 of 2 enabled refused: %v", err)
	}
	// A disabled pool takes no traffic: its origins may all be disabled.
	p.Enabled, p.MinimumOrigins = false, 3
	if err := p.Validate(nil); err != nil {
		t.Errorf("disabled pool refused: %v", err)
	}
}

func TestPolicyHasOneName(t *testing.T) {
	for _, c := range []struct {
		lb   string
		want SteeringPolicy
	}{
		{`{}`, SteeringOff},
		{`{"country_pools": {"GB": ["p1"]}}`, SteeringGeo},
		{`{"region_pools": {"WEU": ["p1"]}}`, SteeringGeo},
		{`{"steering_policy": "off", "region_pools": {"WEU": ["p1"]}}`, SteeringOff},
		{`{"steering_policy": "random"}`, SteeringRandom},
		{`{"steering_policy": ""}`, SteeringOff},
		{`{"steering_policy": "", "country_pools": {"GB": ["p1"]}}`, SteeringGeo},
	} {
		// The field itself holds the name: what the API returns and the
		// stores keep, whatever an older file or client sent.
		if got := decode[LoadBalancer](t, c.lb).SteeringPolicy; got != c.want {
			t.Errorf("%s: steering_policy %q, want %q", c.lb, got, c.want)
		}
	}
	// A load balancer built in Go is named when it is written.
	l := &LoadBalancer{RegionPools: map[string][]string{"WEU": {"p1"}}}
	Canonicalize(l)
	if l.SteeringPolicy != SteeringGeo {
		t.Errorf("written with a region map: steering_policy %q, want geo", l.SteeringPolicy)
	}
}
