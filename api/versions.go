package api

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/glb-dns/glb/pools"
)

// RollbackResult is the answer to a rollback: the version it made (the
// newest), or, when every object already stood as at the version asked
// for, the newest version as it is and no changes.
type RollbackResult struct {
	LoadBalancer string                `json:"load_balancer"`
	RollbackTo   int                   `json:"rollback_to"`
	Version      int                   `json:"version"`
	Revision     int64                 `json:"revision"`
	Changes      []pools.VersionChange `json:"changes"`
}

// listVersions serves GET /load_balancers/{id}/versions: newest first,
// filtered like the audit log (kind and id of an object changed, actor,
// time); the numbers are the versions', whatever the filter.
func (s *server) listVersions(w http.ResponseWriter, r *http.Request) {
	page, fes := pageErrors(r)
	q := r.URL.Query()
	f := pools.VersionFilter{Kind: pools.Kind(q.Get("kind")), ID: q.Get("id"), Actor: q.Get("actor")}
	fes = append(fes, oneOfKinds(f.Kind, pools.VersionKinds, "a kind whose changes make versions")...)
	f.Since, f.Until = timeRange(q, &fes)
	if len(fes) > 0 {
		s.writeError(w, r, badRequest("bad query parameters", fes...))
		return
	}
	h, err := pools.ReadHistory(r.Context(), s.Store, chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var match []pools.Version
	for i := len(h.Versions) - 1; i >= 0; i-- {
		if f.Match(&h.Versions[i]) {
			match = append(match, h.Versions[i])
		}
	}
	offset, limit := page.Bounds()
	items := match[min(offset, len(match)):min(offset+limit, len(match))]
	writeJSON(w, http.StatusOK, pageOf(slices.Clip(items), page, len(match)))
}

// version reads the history and the version the path names.
func (s *server) version(r *http.Request) (*pools.History, *pools.Version, error) {
	id := chi.URLParam(r, "id")
	n, err := strconv.Atoi(chi.URLParam(r, "n"))
	if err != nil || n < 1 {
		return nil, nil, badRequest("bad version", pools.FieldError{Path: "n", Message: "a version is a positive integer"})
	}
	h, err := pools.ReadHistory(r.Context(), s.Store, id)
	if err != nil {
		return nil, nil, err
	}
	v, err := h.Find(id, n)
	return h, v, err
}

// versionTag is a version's entity tag: its revision, which pruning the
// audit log never renumbers.
func versionTag(v *pools.Version) string { return `"` + strconv.FormatInt(v.Revision, 10) + `"` }

// getVersion serves GET /load_balancers/{id}/versions/{n}: the version and
// the objects as they stood at it.
func (s *server) getVersion(w http.ResponseWriter, r *http.Request) {
	_, v, err := s.version(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	objs, err := v.Objects()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("ETag", versionTag(v))
	if notModified(r, versionTag(v)) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeJSON(w, http.StatusOK, item{Result: objs})
}

// rollback serves POST /load_balancers/{id}/versions/{n}/rollback: the
// objects of version n written back in one transaction, each only if it
// still stands as the history read it, audited as a rollback. If-Match,
// when given, is the version's entity tag (its revision): the version the
// caller looked at, not another that took its number.
func (s *server) rollback(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	want, err := ifMatch(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	h, v, err := s.version(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if want > 0 && want != v.Revision {
		s.writeError(w, r, fmt.Errorf("version %d of load_balancer %s is revision %d, not %d: %w", v.Version, id, v.Revision, want, pools.ErrStale))
		return
	}
	plan, err := h.PlanRollback(id, v.Version)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	newest := h.Versions[len(h.Versions)-1]
	out := RollbackResult{LoadBalancer: id, RollbackTo: v.Version, Version: newest.Version, Revision: newest.Revision, Changes: []pools.VersionChange{}}
	if len(plan.Writes) > 0 {
		rev, err := s.Store.Restore(r.Context(), plan)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if h, err = pools.ReadHistory(r.Context(), s.Store, id); err != nil {
			s.writeError(w, r, err)
			return
		}
		for _, nv := range h.Versions {
			if nv.Revision == rev {
				out.Version, out.Revision, out.Changes = nv.Version, nv.Revision, nv.Changes
			}
		}
	}
	writeJSON(w, http.StatusOK, item{Result: out})
}
