package main

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// Two clusters publishing the same set identifier into one operator's
// pool (webhook/glb-pool) keep each other's origins: each writes only
// the origins it owns for the set, at once or one after the other, an
// update or a removal by one leaves the other's and the operator's own
// as they were, and each reads back only its own endpoint. The same
// address in the same set from both is refused to the second (the
// origin's name is taken), never taken over.
func TestSameSetIdentifierInOperatorsPool(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	n.must(http.MethodPost, "/pools", map[string]any{"id": "edge", "name": "edge",
		"origins": []any{map[string]any{"name": "dc1", "address": "203.0.113.1"}}}, "")
	eu, us := n.provider("eu"), n.provider("us")
	inEdge := func(addr string) *endpoint {
		e := ep("app.glb.test", "A", "prod", addr)
		e.ProviderSpecific = []property{{propPool, "edge"}}
		return e
	}
	origins := func() []string {
		t.Helper()
		var out []string
		for _, o := range n.must(http.MethodGet, "/pools/edge", nil, "")["origins"].([]any) {
			m := o.(map[string]any)
			owner, _ := m["owner"].(string)
			out = append(out, m["name"].(string)+" "+m["address"].(string)+" "+owner)
		}
		slices.Sort(out)
		return out
	}
	check := func(when string, want ...string) {
		t.Helper()
		slices.Sort(want)
		if got := origins(); !slices.Equal(got, want) {
			t.Fatalf("%s: pool edge holds %q, want %q", when, got, want)
		}
	}
	applyAtOnce(t, []*provider{eu, us}, func(p *provider) changes {
		addr := map[string]string{"eu": "192.0.2.1", "us": "192.0.2.2"}[p.owner]
		return changes{Create: []*endpoint{inEdge(addr)}}
	})
	check("both published at once", "dc1 203.0.113.1 ", "prod/192.0.2.1 192.0.2.1 external-dns:eu", "prod/192.0.2.2 192.0.2.2 external-dns:us")
	for p, want := range map[*provider]string{eu: "app.glb.test A prod [192.0.2.1] [webhook/glb-pool=edge]", us: "app.glb.test A prod [192.0.2.2] [webhook/glb-pool=edge]"} {
		if got := show(records(t, p)); got != want {
			t.Errorf("%s reads back %q, want %q", p.owner, got, want)
		}
	}
	apply(t, eu, changes{UpdateOld: []*endpoint{inEdge("192.0.2.1")}, UpdateNew: []*endpoint{inEdge("192.0.2.3")}})
	check("eu moved to .3", "dc1 203.0.113.1 ", "prod/192.0.2.3 192.0.2.3 external-dns:eu", "prod/192.0.2.2 192.0.2.2 external-dns:us")
	apply(t, us, changes{UpdateOld: []*endpoint{inEdge("192.0.2.2")}, UpdateNew: []*endpoint{inEdge("192.0.2.4")}})
	check("us moved to .4", "dc1 203.0.113.1 ", "prod/192.0.2.3 192.0.2.3 external-dns:eu", "prod/192.0.2.4 192.0.2.4 external-dns:us")
	apply(t, us, changes{Delete: []*endpoint{inEdge("192.0.2.4")}})
	check("us removed", "dc1 203.0.113.1 ", "prod/192.0.2.3 192.0.2.3 external-dns:eu")
	if got := records(t, us); len(got) != 0 {
		t.Errorf("us reads back %s after removing its endpoint", show(got))
	}
	// The same address in the same set from both: the origin's name is
	// taken by eu's, so us is refused, saying so, and eu's stays.
	err := us.ApplyChanges(context.Background(), &changes{Create: []*endpoint{inEdge("192.0.2.3")}})
	if err == nil || !strings.Contains(err.Error(), `duplicate origin name \"prod/192.0.2.3\"`) {
		t.Errorf("us publishing eu's address in the same set: %v, want the duplicate origin name refused", err)
	}
	check("us refused eu's address", "dc1 203.0.113.1 ", "prod/192.0.2.3 192.0.2.3 external-dns:eu")
}
