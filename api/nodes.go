package api

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/glb-dns/glb/pools"
)

// nodeRoutes: the fleet, read by anyone who may read, drained by admins.
func (s *server) nodeRoutes(r chi.Router) {
	r.Get(Prefix+"/nodes", s.listNodes)
	r.Get(Prefix+"/nodes/{name}", s.getNode)
	r.Post(Prefix+"/nodes/{name}/drain", s.drainNode)
	r.Delete(Prefix+"/nodes/{name}/drain", s.undrainNode)
}

// isNodeDrain reports whether p is /nodes/{name}/drain.
func isNodeDrain(p string) bool {
	rest, ok := strings.CutPrefix(p, Prefix+"/nodes/")
	name, ok2 := strings.CutSuffix(rest, "/drain")
	return ok && ok2 && name != "" && !strings.Contains(name, "/")
}

func (s *server) goneAfter() time.Duration {
	if s.NodeGoneAfter > 0 {
		return s.NodeGoneAfter
	}
	return pools.NodeGoneAfter
}

// nodeViews is every node as seen now, ordered by name.
func (s *server) nodeViews(r *http.Request) ([]pools.NodeView, error) {
	l, err := s.Store.Nodes(r.Context())
	if err != nil {
		return nil, err
	}
	now := s.Now()
	out := make([]pools.NodeView, len(l.Items))
	for i := range l.Items {
		out[i] = l.Items[i].View(l.Revision, now, s.goneAfter())
	}
	return out, nil
}

// listNodes answers GET /nodes: every node that has run against the
// store, with its state at the server's clock.
func (s *server) listNodes(w http.ResponseWriter, r *http.Request) {
	vs, err := s.nodeViews(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, item{Result: vs})
}

// getNode answers GET /nodes/{name}.
func (s *server) getNode(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "name")
	vs, err := s.nodeViews(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	for _, v := range vs {
		if v.Name == name {
			writeJSON(w, http.StatusOK, item{Result: v})
			return
		}
	}
	s.writeError(w, r, fmt.Errorf("node %q: %w", name, pools.ErrNotFound))
}

// drainRequest is the body of POST /nodes/{name}/drain.
type drainRequest struct {
	Reason string     `json:"reason"`
	Until  *time.Time `json:"until"`
}

// drainNode answers POST /nodes/{name}/drain (admin): the node hears of
// it from the store's change feed (at its next report, a second at most,
// without one), withdraws its routes at once, answers for its drain
// grace, then reports drained. Draining a drained node replaces the
// reason and until.
func (s *server) drainNode(w http.ResponseWriter, r *http.Request) {
	var req drainRequest
	if err := readInto(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	now := s.Now()
	var ve pools.ValidationError
	if strings.TrimSpace(req.Reason) == "" {
		ve.Errors = append(ve.Errors, pools.FieldError{Path: "reason", Message: "required: say why the node is drained"})
	}
	if req.Until != nil && !req.Until.After(now) {
		ve.Errors = append(ve.Errors, pools.FieldError{Path: "until", Message: "must be in the future"})
	}
	if len(ve.Errors) > 0 {
		s.writeError(w, r, &ve)
		return
	}
	d := &pools.NodeDrain{Reason: req.Reason, At: pools.StoreTime(now), By: callerOf(r.Context())}
	if req.Until != nil {
		u := pools.StoreTime(*req.Until)
		d.Until = &u
	}
	s.setDrain(w, r, d)
}

// undrainNode answers DELETE /nodes/{name}/drain (admin): the node hears
// of it as of a drain, and announces and serves again.
func (s *server) undrainNode(w http.ResponseWriter, r *http.Request) {
	s.setDrain(w, r, nil)
}

func (s *server) setDrain(w http.ResponseWriter, r *http.Request, d *pools.NodeDrain) {
	name := chi.URLParam(r, "name")
	rec, err := s.Store.DrainNode(r.Context(), name, d)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	l, err := s.Store.Nodes(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if d != nil {
		s.log.Info("node drain asked", "node", name, "reason", d.Reason, "until", d.Until, "by", d.By)
	} else {
		s.log.Info("node undrained", "node", name, "by", callerOf(r.Context()))
	}
	writeJSON(w, http.StatusOK, item{Result: rec.View(l.Revision, s.Now(), s.goneAfter())})
}
