package api

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/glb-dns/glb/pools"
)

// explain answers GET /load_balancers/{id}/explain?client=IP&ecs=CIDR&type=A
// with the Explainer's trace. type defaults to A; ecs is optional.
func (s *server) explain(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	q := r.URL.Query()
	var fes []pools.FieldError
	client, err := netip.ParseAddr(q.Get("client"))
	switch {
	case q.Get("client") == "":
		fes = append(fes, pools.FieldError{Path: "client", Message: "required: the address of the client or its resolver"})
	case err != nil || client.Zone() != "":
		fes = append(fes, pools.FieldError{Path: "client", Message: "not an IPv4 or IPv6 address"})
	}
	var ecs netip.Prefix
	if v := q.Get("ecs"); v != "" {
		p, err := netip.ParsePrefix(v)
		if err != nil {
			fes = append(fes, pools.FieldError{Path: "ecs", Message: "not a CIDR prefix such as 192.0.2.0/24"})
		} else {
			// A resolver sends the subnet with host bits cleared.
			ecs = p.Masked()
		}
	}
	qtype := strings.ToUpper(q.Get("type"))
	switch qtype {
	case "":
		qtype = "A"
	case "A", "AAAA":
	default:
		fes = append(fes, pools.FieldError{Path: "type", Message: fmt.Sprintf("%q: must be A or AAAA", q.Get("type"))})
	}
	if len(fes) > 0 {
		s.writeError(w, r, badRequest("bad query parameters", fes...))
		return
	}
	// The store says whether the load balancer exists even when the
	// snapshot the explainer reads lags behind it.
	if _, err := s.Store.Get(r.Context(), pools.KindLoadBalancer, id); err != nil {
		s.writeError(w, r, err)
		return
	}
	if s.Explainer == nil {
		s.writeError(w, r, newProblem(http.StatusNotImplemented, "this server has no steering engine to explain with"))
		return
	}
	trace, err := s.Explainer.Explain(r.Context(), id, client.Unmap(), ecs, qtype)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, item{Result: trace})
}
