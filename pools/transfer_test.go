package pools

import (
	"slices"
	"testing"
)

// TestZoneTransferErrors: every bad transfer field is named, and a signed
// zone cannot be transferred.
func TestZoneTransferErrors(t *testing.T) {
	z := decode[Zone](t, `{"name": "glb.example.com", "nameservers": ["ns1.glb.example.com"], "soa": {"refresh": 1, "retry": 1, "expire": 1},
		"dnssec": {"enabled": true},
		"transfer": {"allow": ["10.0.0.0/8", "not a net"], "tsig_keys": ["bad key"], "notify": ["192.0.2.1:53", "192.0.2.1"], "min_interval": -1}}`)
	want := []string{"transfer", "transfer.allow[1]", "transfer.min_interval", "transfer.notify[1]", "transfer.tsig_keys[0]"}
	if got := paths(t, z.Validate(nil)); !slices.Equal(got, want) {
		t.Errorf("errors\n got %v\nwant %v", got, want)
	}
	z = decode[Zone](t, `{"name": "glb.example.com", "nameservers": ["ns1.glb.example.com"], "soa": {"refresh": 1, "retry": 1, "expire": 1},
		"transfer": {"notify": ["192.0.2.1:53"]}}`)
	if got := paths(t, z.Validate(nil)); !slices.Equal(got, []string{"transfer.notify"}) {
		t.Errorf("notify without allow or keys: %v", got)
	}
	z.Transfer.Allow = []string{"192.0.2.1"}
	if err := z.Validate(nil); err != nil {
		t.Errorf("an address is a network of one: %v", err)
	}
	if z.Transfer.Interval() != DefaultTransferMinInterval {
		t.Errorf("min_interval 0 is %d s", z.Transfer.Interval())
	}
}
