package api

import (
	"net/http"

	"github.com/glb-dns/glb/pools"
)

// safety answers GET /safety: the safety rules that no longer hold now,
// on every load balancer, with the shifts in force and the agreed health
// of the snapshot being served. A shift that would break a rule is
// refused when it starts; health that changes afterwards is not refused,
// so this is where an operator (the console's overview) sees it.
func (s *server) safety(w http.ResponseWriter, r *http.Request) {
	if s.Snapshot == nil {
		s.writeError(w, r, newProblem(http.StatusNotImplemented, "this server has no steering engine to judge the safety rules with"))
		return
	}
	snap, _ := s.Snapshot()
	if snap == nil {
		s.writeError(w, r, newProblem(http.StatusServiceUnavailable, "no configuration snapshot loaded yet"))
		return
	}
	rules, err := s.Store.SafetyRules(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := []pools.ShiftHarm{}
	for _, lb := range snap.LoadBalancers() {
		out = append(out, snap.SafetyNow(lb)...)
	}
	out = append(out, snap.GlobalSafetyNow(rules)...)
	writeJSON(w, http.StatusOK, item{Result: out})
}
