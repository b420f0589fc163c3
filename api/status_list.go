package api

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/glb-dns/glb/pools"
)

// listWithStatus answers the list of a kind whose objects carry a state
// derived from the clock (shifts, rollouts): each object through
// withStatus, and ?status= (one or more of states, comma-separated)
// filtering by it. The store cannot filter what the clock moves, so a
// filtered list reads every object (a few hundred at most) and pages here.
func (s *server) listWithStatus(w http.ResponseWriter, r *http.Request, k pools.Kind, states []string,
	withStatus func(pools.Object) (pools.Object, string)) {
	page, err := parsePage(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var want []string
	if v := r.URL.Query().Get("status"); v != "" {
		for _, st := range strings.Split(v, ",") {
			if !slices.Contains(states, st) {
				s.writeError(w, r, badRequest("bad query parameters", pools.FieldError{Path: "status",
					Message: fmt.Sprintf("%q: must be one or more of %s, comma-separated", st, strings.Join(states, ", "))}))
				return
			}
			want = append(want, st)
		}
	}
	var items []pools.Object
	total := 0
	if want == nil {
		res, err := s.Store.List(r.Context(), k, page)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		for _, o := range res.Items {
			o, _ = withStatus(o)
			items = append(items, o)
		}
		total = res.TotalCount
	} else {
		all, err := s.allOf(r.Context(), k)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		var match []pools.Object
		for _, o := range all {
			if o, st := withStatus(o); slices.Contains(want, st) {
				match = append(match, o)
			}
		}
		total = len(match)
		off, lim := page.Bounds()
		if off < len(match) {
			items = match[off:min(len(match), off+lim)]
		}
	}
	if items == nil {
		items = []pools.Object{}
	}
	writeJSON(w, http.StatusOK, list{Result: items, ResultInfo: resultInfo{
		Page: page.Page, PerPage: page.PerPage, Count: len(items), TotalCount: total,
		TotalPages: (total + page.PerPage - 1) / page.PerPage,
	}})
}

// allOf reads every stored object of kind k, page by page.
func (s *server) allOf(ctx context.Context, k pools.Kind) ([]pools.Object, error) {
	var out []pools.Object
	for p := 1; ; p++ {
		res, err := s.Store.List(ctx, k, pools.Page{Page: p, PerPage: pools.MaxPerPage})
		if err != nil {
			return nil, err
		}
		out = append(out, res.Items...)
		if len(res.Items) < pools.MaxPerPage {
			return out, nil
		}
	}
}
