package pools

import (
	"slices"
	"testing"
)

func TestZoneCutsValidation(t *testing.T) {
	const digest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	z := decode[Zone](t, `{
		"name": "glb.example.com", "nameservers": ["ns1.glb.example.com"],
		"soa": {"refresh": 1, "retry": 1, "expire": 1},
		"records": [
			{"name": "sub.glb.example.com", "type": "NS", "content": "ns.sub.glb.example.com"},
			{"name": "sub.glb.example.com", "type": "DS", "content": "1 13 2 `+digest+`"},
			{"name": "ns.sub.glb.example.com", "type": "A", "content": "192.0.2.1"},
			{"name": "ns.sub.glb.example.com", "type": "AAAA", "content": "2001:db8::1"},
			{"name": "sub.glb.example.com", "type": "A", "content": "192.0.2.2"},
			{"name": "www.glb.example.com", "type": "TXT", "content": "fine"}
		]}`)
	if err := z.Validate(nil); err != nil {
		t.Fatalf("a cut with DS and glue refused: %v", err)
	}
	if got := z.Cuts(); !slices.Equal(got, []string{"sub.glb.example.com"}) {
		t.Errorf("cuts %q", got)
	}

	bad := decode[Zone](t, `{
		"name": "glb.example.com", "nameservers": ["ns1.glb.example.com"],
		"soa": {"refresh": 1, "retry": 1, "expire": 1},
		"records": [
			{"name": "sub.glb.example.com", "type": "NS", "content": "ns.other.net"},
			{"name": "www.sub.glb.example.com", "type": "TXT", "content": "hidden"},
			{"name": "sub.glb.example.com", "type": "MX", "content": "10 mx.other.net"},
			{"name": "www.glb.example.com", "type": "DS", "content": "1 13 2 `+digest+`"},
			{"name": "glb.example.com", "type": "DS", "content": "1 13 2 `+digest+`"},
			{"name": "deeper.sub.glb.example.com", "type": "NS", "content": "ns.other.net"},
			{"name": "sub.glb.example.com", "type": "DS", "content": "1 13 2 abcd"},
			{"name": "sub.glb.example.com", "type": "DS", "content": "1 13 2 nothex"}
		]}`)
	want := []string{"records[1].name", "records[2].type", "records[3].type", "records[4].type", "records[5].name",
		"records[6].content", "records[7].content"}
	if got := paths(t, bad.Validate(nil)); !slices.Equal(got, want) {
		t.Errorf("paths %q, want %q", got, want)
	}
}

// cutWorld is a store's view: zone z with a cut at sub, and a load
// balancer www.sub already in it.
type cutWorld struct{ refs }

func (cutWorld) ZoneCuts(id string) []string {
	if id == "z" {
		return []string{"sub.glb.example.com"}
	}
	return nil
}
func (cutWorld) LoadBalancersOf(string) []string { return []string{"www.sub.glb.example.com"} }

func TestLoadBalancerBelowCutRefused(t *testing.T) {
	for _, name := range []string{"sub.glb.example.com", "www.sub.glb.example.com", "WWW.Sub.glb.example.com."} {
		l := DefaultLoadBalancer()
		l.Zone, l.Name, l.DefaultPools, l.FallbackPool = "z", name, []string{"p1"}, "p1"
		if got := paths(t, l.Validate(cutWorld{})); !slices.Equal(got, []string{"name"}) {
			t.Errorf("%s: paths %q, want [name]", name, got)
		}
	}
	l := DefaultLoadBalancer()
	l.Zone, l.Name, l.DefaultPools, l.FallbackPool = "z", "subway.glb.example.com", []string{"p1"}, "p1"
	if err := l.Validate(cutWorld{}); err != nil {
		t.Errorf("a sibling of the cut refused: %v", err)
	}
}

func TestCutOverExistingLoadBalancerRefused(t *testing.T) {
	z := decode[Zone](t, `{
		"id": "z", "name": "glb.example.com", "nameservers": ["ns1.glb.example.com"],
		"soa": {"refresh": 1, "retry": 1, "expire": 1},
		"records": [{"name": "sub.glb.example.com", "type": "NS", "content": "ns.other.net"}]}`)
	if got := paths(t, z.Validate(cutWorld{})); !slices.Equal(got, []string{"records[0].name"}) {
		t.Errorf("paths %q, want [records[0].name]", got)
	}
}
