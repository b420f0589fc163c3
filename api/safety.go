package api

import (
	"net/http"

	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

// safety answers GET /safety: the safety rules that no longer hold now,
// on every load balancer, with the shifts in force and the agreed health
// of the snapshot being served. A shift that would break a rule is
// refused when it starts; health that changes afterwards is not refused,
// so this is where an operator (the console's overview) sees it.
func (s *server) safety(w http.ResponseWriter, r *http.Request) {
	snap, rules, ok := s.safetyBasis(w, r, "to judge the safety rules with")
	if !ok {
		return
	}
	out := []pools.ShiftHarm{}
	for _, lb := range snap.LoadBalancers() {
		out = append(out, snap.SafetyNow(lb)...)
	}
	out = append(out, snap.GlobalSafetyNow(rules)...)
	writeJSON(w, http.StatusOK, item{Result: out})
}

// safetyBasis is what the safety rules are judged on: the snapshot being
// served and the global rules as stored now. ok is false when it has
// answered the request itself (see served).
func (s *server) safetyBasis(w http.ResponseWriter, r *http.Request, what string) (*steering.Snapshot, pools.SafetyRules, bool) {
	snap, _, ok := s.served(w, r, what)
	if !ok {
		return nil, pools.SafetyRules{}, false
	}
	rules, err := s.Store.SafetyRules(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return nil, pools.SafetyRules{}, false
	}
	return snap, rules, true
}
