package api

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/glb-dns/glb/pools"
)

// accessRoutes adds the token and audit routes.
func (s *server) accessRoutes(r chi.Router) {
	r.Get(Prefix+"/tokens", s.listTokens)
	r.Post(Prefix+"/tokens", s.createToken)
	r.Get(Prefix+"/tokens/{name}", s.getToken)
	r.Delete(Prefix+"/tokens/{name}", s.deleteToken)
	r.Get(Prefix+"/audit", s.audit)
}

// auditKinds are the kinds the audit log records: the configuration's,
// agreed health transitions, tokens and TSIG keys.
var auditKinds = append(slices.Clone(pools.Kinds), pools.KindHealth, pools.KindToken, pools.KindTSIGKey, pools.KindShift, pools.KindNotification, pools.KindSafetyRules)

// audit serves GET /audit: the history of every change, newest first,
// filtered by kind, object id, actor and time.
func (s *server) audit(w http.ResponseWriter, r *http.Request) {
	page, err := parsePage(r)
	var fes []pools.FieldError
	if p, ok := err.(*Problem); ok {
		fes = append(fes, p.Errors...)
	}
	q := r.URL.Query()
	f := pools.AuditFilter{Kind: pools.Kind(q.Get("kind")), ObjectID: q.Get("id"), Actor: q.Get("actor")}
	if f.Kind != "" && !slices.Contains(auditKinds, f.Kind) {
		// A kind the log never records would answer an empty list, which
		// reads as "nothing happened" rather than as the typo it is.
		names := make([]string, len(auditKinds))
		for i, k := range auditKinds {
			names[i] = string(k)
		}
		fes = append(fes, pools.FieldError{Path: "kind", Message: fmt.Sprintf("%q is not a kind the audit log records: one of %s", f.Kind, strings.Join(names, ", "))})
	}
	for _, t := range []struct {
		name string
		dst  *time.Time
	}{{"since", &f.Since}, {"until", &f.Until}} {
		v := q.Get(t.name)
		if v == "" {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			fes = append(fes, pools.FieldError{Path: t.name, Message: "must be an RFC 3339 time, e.g. 2026-01-02T15:04:05Z"})
		}
		*t.dst = at
	}
	if len(fes) > 0 {
		s.writeError(w, r, badRequest("bad query parameters", fes...))
		return
	}
	res, err := s.Store.Audit(r.Context(), f, page)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, pageOf(res.Items, page, res.TotalCount))
}
