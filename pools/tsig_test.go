package pools

import "testing"

// TestTSIGKeyAllows: each match kind covers exactly the names BIND's
// update-policy rule of that kind would, in its zone, for its types.
func TestTSIGKeyAllows(t *testing.T) {
	k := TSIGKey{Grants: []TSIGGrant{
		{Zone: "z", Name: "www.glb.example.com", Match: MatchACMEChallenge, Types: []string{"TXT"}},
		{Zone: "z", Name: "api.glb.example.com", Match: MatchExact, Types: []string{"A", "AAAA"}},
		{Zone: "z", Name: "dyn.glb.example.com", Match: MatchSubtree, Types: []string{"TXT", "HTTPS"}},
	}}
	for _, c := range []struct {
		zone, owner, typ string
		want             bool
	}{
		{"z", "_acme-challenge.www.glb.example.com", "TXT", true},
		{"z", "_acme-challenge.www.glb.example.com", "A", false},
		{"z", "www.glb.example.com", "TXT", false},
		{"z", "x._acme-challenge.www.glb.example.com", "TXT", false},
		{"z", "_acme-challenge.x.www.glb.example.com", "TXT", false},
		{"other", "_acme-challenge.www.glb.example.com", "TXT", false},
		{"z", "api.glb.example.com", "AAAA", true},
		{"z", "x.api.glb.example.com", "A", false},
		{"z", "dyn.glb.example.com", "TXT", true},
		{"z", "a.b.dyn.glb.example.com", "HTTPS", true},
		{"z", "xdyn.glb.example.com", "TXT", false},
		{"z", "a.dyn.glb.example.com", "A", false},
	} {
		if got := k.Allows(c.zone, c.owner, c.typ); got != c.want {
			t.Errorf("Allows(%s, %s, %s) = %v, want %v", c.zone, c.owner, c.typ, got, c.want)
		}
	}
}
