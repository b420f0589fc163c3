package api

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
)

// DefaultRUMGroups and MaxRUMGroups bound the autonomous systems,
// networks and resolvers that
// GET /load_balancers/{id}/rum lists (those with the most samples).
const (
	DefaultRUMGroups = 100
	MaxRUMGroups     = 1000
)

// RUMView is the body of GET /load_balancers/{id}/rum: what real users
// measured of the load balancer's candidate pools, per region, country,
// autonomous system, client network and resolver, as the served snapshot ranks by it.
type RUMView struct {
	LoadBalancer   string               `json:"load_balancer"`
	Name           string               `json:"name"`
	SteeringPolicy pools.SteeringPolicy `json:"steering_policy"`
	Revision       int64                `json:"revision"`
	Table          steering.RUMTable    `json:"table"`
}

// rumView serves GET /load_balancers/{id}/rum?limit=N.
func (s *server) rumView(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	limit := DefaultRUMGroups
	var fes []pools.FieldError
	for name, vs := range r.URL.Query() {
		switch name {
		case "limit":
			n, err := strconv.Atoi(vs[0])
			if err != nil || n < 1 || n > MaxRUMGroups {
				fes = append(fes, pools.FieldError{Path: "limit", Message: fmt.Sprintf("%q: a whole number from 1 to %d (autonomous systems, networks and resolvers listed, most samples first)", vs[0], MaxRUMGroups)})
				continue
			}
			limit = n
		default:
			fes = append(fes, pools.FieldError{Path: name, Message: "unknown parameter: the only one is limit"})
		}
	}
	if len(fes) > 0 {
		s.writeError(w, r, badRequest(fmt.Sprintf("%d parameter(s) at fault", len(fes)), fes...))
		return
	}
	lbObj, err := s.Store.Get(r.Context(), pools.KindLoadBalancer, id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	snap, _, ok := s.served(w, r, "to read real user measurements from")
	if !ok {
		return
	}
	lb := snap.LoadBalancerByID(id)
	if lb == nil {
		s.writeError(w, r, unserved(lbObj.(*pools.LoadBalancer), "id"))
		return
	}
	out := &RUMView{LoadBalancer: id, Name: lb.Name(), SteeringPolicy: lb.Policy(), Revision: snap.Revision(),
		Table: snap.RUMTable(lb, limit)}
	writeJSON(w, http.StatusOK, item{Result: out})
}
