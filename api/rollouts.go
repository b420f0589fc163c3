package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/glb-dns/glb/pools"
)

// rolloutNow is a rollout with its state and step at the server's clock.
func (s *server) rolloutNow(o pools.Object) (pools.Object, string) {
	r := o.(*pools.Rollout).WithStatus(s.Now())
	return r, r.Status
}

func (s *server) rolloutRoutes(r chi.Router) {
	collection{list: s.listRollouts, create: s.startRollout, get: s.getRollout}.mount(r, Prefix+"/rollouts", "id")
	for _, action := range []string{pools.RolloutPause, pools.RolloutResume, pools.RolloutAbort} {
		r.Post(Prefix+"/rollouts/{id}/"+action, s.changeRollout(action))
	}
}

// listRollouts lists rollouts in creation order; ?status=running,paused
// filters by state.
func (s *server) listRollouts(w http.ResponseWriter, r *http.Request) {
	s.listWithStatus(w, r, pools.KindRollout, pools.RolloutStates, s.rolloutNow)
}

func (s *server) getRollout(w http.ResponseWriter, r *http.Request) {
	o, err := s.Store.Get(r.Context(), pools.KindRollout, chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out, _ := s.rolloutNow(o)
	writeObject(w, http.StatusOK, out)
}

// startRollout answers POST /rollouts: 201 with the stored rollout; 409
// when the pool (or load balancer) has a rollout that has not ended, or
// when the new weights or order would break a load balancer's
// min_serving_pools (an admin may send "override": true, as for shifts).
func (s *server) startRollout(w http.ResponseWriter, r *http.Request) {
	doc, err := readJSON(w, r, false)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	override, _ := doc["override"].(bool)
	delete(doc, "override")
	o, err := s.decodeNew(pools.KindRollout, doc)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ro := o.(*pools.Rollout)
	if err := overrideRefused(r.Context(), override); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := guardScope(r.Context(), ro.Guards); err != nil {
		s.writeError(w, r, err)
		return
	}
	if s.refuseOutbound(w, r, s.checkOutbound(r.Context(), outboundURL{"guards.webhook", ro.Guards.Webhook},
		outboundURL{"guards.prometheus", ro.Guards.Prometheus})) {
		return
	}
	guard := func(final pools.Object) error {
		if s.Snapshot == nil || override {
			return nil
		}
		snap, _ := s.Snapshot()
		if snap == nil {
			return newProblem(http.StatusServiceUnavailable, "no configuration snapshot loaded yet: the safety rules cannot be checked")
		}
		harms, err := snap.RolloutHarm(final)
		if err != nil {
			return err
		}
		if len(harms) > 0 {
			return &pools.SafetyError{Harms: harms}
		}
		return nil
	}
	out, err := s.Store.StartRollout(r.Context(), ro, guard)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Location", Prefix+"/rollouts/"+out.ID)
	res, _ := s.rolloutNow(out)
	writeObject(w, http.StatusCreated, res)
}

// changeRollout answers POST /rollouts/{id}/pause, /resume and /abort.
// If-Match, when given, must name the rollout's revision. An optional
// body {"reason": "..."} is recorded with the event.
func (s *server) changeRollout(action string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rev, err := ifMatch(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		var body struct {
			Reason string `json:"reason"`
		}
		if r.ContentLength != 0 {
			doc, err := readJSON(w, r, false)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			if fes, err := pools.DecodeInto(doc, &body); err != nil {
				s.writeError(w, r, err)
				return
			} else if len(fes) > 0 {
				s.writeError(w, r, badRequest("bad request body", fes...))
				return
			}
		}
		out, err := s.Store.ChangeRollout(r.Context(), chi.URLParam(r, "id"), rev, action, body.Reason)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		res, _ := s.rolloutNow(out)
		writeObject(w, http.StatusOK, res)
	}
}
