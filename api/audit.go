package api

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/glb-dns/glb/pools"
)

// accessRoutes adds the token and audit routes.
func (s *server) accessRoutes(r chi.Router) {
	collection{list: s.listTokens, create: s.createToken, get: s.getToken, delete: s.deleteToken}.mount(r, Prefix+"/tokens", "name")
	r.Get(Prefix+"/audit", s.audit)
}

// auditKinds are the kinds the audit log records: the configuration's,
// agreed health transitions, tokens, TSIG keys, ..., node drains and
// words fed in.
var auditKinds = append(slices.Clone(pools.Kinds), pools.KindHealth, pools.KindToken, pools.KindTSIGKey, pools.KindShift, pools.KindRollout, pools.KindNotification, pools.KindSafetyRules, pools.KindRollback, pools.KindNode, pools.KindFeed)

// audit serves GET /audit: the history of every change, newest first,
// filtered by kind, object id, actor and time.
func (s *server) audit(w http.ResponseWriter, r *http.Request) {
	page, fes := pageErrors(r)
	q := r.URL.Query()
	f := pools.AuditFilter{Kind: pools.Kind(q.Get("kind")), ObjectID: q.Get("id"), Actor: q.Get("actor")}
	// A kind the log never records would answer an empty list, which
	// reads as "nothing happened" rather than as the typo it is.
	fes = append(fes, oneOfKinds(f.Kind, auditKinds, "a kind the audit log records")...)
	f.Since, f.Until = timeRange(q, &fes)
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

// oneOfKinds refuses a kind filter outside kinds, naming them all.
func oneOfKinds(k pools.Kind, kinds []pools.Kind, what string) []pools.FieldError {
	if k == "" || slices.Contains(kinds, k) {
		return nil
	}
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	return []pools.FieldError{{Path: "kind", Message: fmt.Sprintf("%q is not %s: one of %s", k, what, strings.Join(names, ", "))}}
}

// timeRange reads ?since= and ?until= as RFC 3339 times, adding a field
// error to fes for each that is not one.
func timeRange(q url.Values, fes *[]pools.FieldError) (since, until time.Time) {
	for _, t := range []struct {
		name string
		dst  *time.Time
	}{{"since", &since}, {"until", &until}} {
		v := q.Get(t.name)
		if v == "" {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			*fes = append(*fes, pools.FieldError{Path: t.name, Message: "must be an RFC 3339 time, e.g. 2026-01-02T15:04:05Z"})
		}
		*t.dst = at
	}
	return since, until
}

// pageErrors reads the page of a filtered list and its field errors, so
// that they are reported with the filters' own in one 400.
func pageErrors(r *http.Request) (pools.Page, []pools.FieldError) {
	page, err := parsePage(r)
	if p, ok := err.(*Problem); ok {
		return page, p.Errors
	}
	return page, nil
}
