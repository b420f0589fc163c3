package api_test

import (
	"strings"
	"testing"
)

// TestAuditUnknownKind: a kind the audit log never records (a singular
// "pool", say) is a 400 that names the kinds it does, not an empty list.
func TestAuditUnknownKind(t *testing.T) {
	e := parallelEnv(t, nil)
	p := e.do("GET", "/api/v1/audit?kind=pool", nil).problem(t, 400)
	if len(p.Errors) != 1 || p.Errors[0].Path != "kind" || !strings.Contains(p.Errors[0].Message, "pools") || !strings.Contains(p.Errors[0].Message, "health") {
		t.Errorf("kind=pool: %+v, want a kind error naming the kinds", p)
	}
	for _, kind := range []string{"pools", "health", "tokens", "tsig_keys", "load_balancers"} {
		if r := e.do("GET", "/api/v1/audit?kind="+kind, nil); r.status != 200 {
			t.Errorf("kind=%s: %d %s", kind, r.status, r.body)
		}
	}
}
