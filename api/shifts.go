package api

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/glb-dns/glb/pools"
)

// problemSafety is the problem type of a shift refused by a safety rule.
const problemSafety = "urn:glb:problem:safety-rule"

// shiftStates are the values ?status= takes.
var shiftStates = []string{pools.ShiftScheduled, pools.ShiftActive, pools.ShiftEnded, pools.ShiftExpired}

func (s *server) shiftRoutes(r chi.Router) {
	collection{list: s.listShifts, create: s.startShift, get: s.getShift, delete: s.endShift}.mount(r, Prefix+"/shifts", "id")
	r.Get(Prefix+"/safety", s.safety)
	r.Get(Prefix+"/safety/rules", s.safetyRules)
	r.Put(Prefix+"/safety/rules", s.putSafetyRules)
}

// withStatus returns the shift with its state at the server's clock.
func (s *server) withStatus(o pools.Object) *pools.Shift {
	sh := *o.(*pools.Shift)
	sh.Status = sh.State(s.Now())
	return &sh
}

// listShifts lists shifts in creation order like every collection;
// ?status=active,scheduled filters by state.
func (s *server) listShifts(w http.ResponseWriter, r *http.Request) {
	s.listWithStatus(w, r, pools.KindShift, shiftStates, func(o pools.Object) (pools.Object, string) {
		sh := s.withStatus(o)
		return sh, sh.Status
	})
}

func (s *server) getShift(w http.ResponseWriter, r *http.Request) {
	o, err := s.Store.Get(r.Context(), pools.KindShift, chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeObject(w, http.StatusOK, s.withStatus(o))
}

// startShift answers POST /shifts: 201 with the stored shift, 409 when a
// safety rule refuses it (nothing stored) unless an admin overrides.
func (s *server) startShift(w http.ResponseWriter, r *http.Request) {
	doc, err := readJSON(w, r, false)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	o, err := s.decodeNew(pools.KindShift, doc)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	sh := o.(*pools.Shift)
	if err := s.checkShiftRefs(r.Context(), sh); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := overrideRefused(r.Context(), sh.Override); err != nil {
		s.writeError(w, r, err)
		return
	}
	// The global rules are read just before the write's transaction; a
	// change to them that lands in between is the operator's own race.
	snap, rules, ok := s.safetyBasis(w, r, "to check safety rules with")
	if !ok {
		return
	}
	guard := func(stored []pools.Shift) error {
		harms := append(snap.ShiftHarm(stored, sh), snap.GlobalShiftHarm(stored, rules, sh)...)
		if len(harms) == 0 {
			return nil
		}
		if sh.Override {
			sh.Overridden = harms
			return nil
		}
		return &pools.SafetyError{Harms: harms}
	}
	out, err := s.Store.StartShift(r.Context(), sh, guard)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if len(out.Overridden) > 0 {
		s.log.Warn("shift started over safety rules", "shift", out.ID, "actor", callerOf(r.Context()), "rules", len(out.Overridden))
	}
	w.Header().Set("Location", Prefix+"/shifts/"+out.ID)
	writeObject(w, http.StatusCreated, s.withStatus(out))
}

// decodeNew decodes the body of a create that the clock completes (a
// shift, a rollout) and prepares it: its times and defaults from the
// server's clock, every field at fault named at once.
func (s *server) decodeNew(k pools.Kind, doc map[string]any) (pools.Object, error) {
	o, err := decodeObject(k, doc)
	if err != nil {
		return nil, err
	}
	if err := o.(interface{ Prepare(time.Time) error }).Prepare(s.Now()); err != nil {
		return nil, err
	}
	return o, nil
}

// overrideRefused is the 403 of a safety override asked by a token
// without the admin scope; nil when there is none or the token may.
func overrideRefused(ctx context.Context, override bool) error {
	if !override || isAdmin(ctx) {
		return nil
	}
	p := newProblem(http.StatusForbidden, "overriding a safety rule needs a token with the admin scope")
	p.Type, p.Title, p.MissingScope = problemForbidden, "Missing scope", string(pools.ScopeAdmin)
	return p
}

// checkShiftRefs checks what the shift names against the store: its pool,
// its origin, a zone some origin carries, its load balancers.
func (s *server) checkShiftRefs(ctx context.Context, sh *pools.Shift) error {
	var fes []pools.FieldError
	bad := func(path, format string, args ...any) {
		fes = append(fes, pools.FieldError{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	exists := func(k pools.Kind, id string) (pools.Object, bool, error) {
		o, err := s.Store.Get(ctx, k, id)
		if err != nil {
			if pools.IsDomainError(err) && !isUnavailable(err) {
				return nil, false, nil
			}
			return nil, false, err
		}
		return o, true, nil
	}
	t := sh.Target
	switch {
	case t.Pool != "":
		if _, ok, err := exists(pools.KindPool, t.Pool); err != nil {
			return err
		} else if !ok {
			bad("target.pool", "no pool with id %q", t.Pool)
		}
	case t.Origin != "":
		pid, name, _ := t.OriginParts()
		o, ok, err := exists(pools.KindPool, pid)
		if err != nil {
			return err
		}
		if !ok {
			bad("target.origin", "no pool with id %q", pid)
		} else if !slices.ContainsFunc(o.(*pools.Pool).Origins, func(x pools.Origin) bool { return x.Name == name }) {
			bad("target.origin", "pool %q has no origin named %q", pid, name)
		}
	case t.Zone != "":
		found := false
		for p := 1; !found; p++ {
			res, err := s.Store.List(ctx, pools.KindPool, pools.Page{Page: p, PerPage: 1000})
			if err != nil {
				return err
			}
			for _, o := range res.Items {
				found = found || slices.ContainsFunc(o.(*pools.Pool).Origins, func(x pools.Origin) bool { return x.Zone == t.Zone })
			}
			if len(res.Items) < 1000 {
				break
			}
		}
		if !found {
			bad("target.zone", "no origin has the zone label %q", t.Zone)
		}
	}
	for i, id := range sh.LoadBalancers {
		if _, ok, err := exists(pools.KindLoadBalancer, id); err != nil {
			return err
		} else if !ok {
			bad(fmt.Sprintf("load_balancers[%d]", i), "no load balancer with id %q", id)
		}
	}
	if len(fes) > 0 {
		return badRequest(fmt.Sprintf("%d field(s) at fault; nothing was stored", len(fes)), fes...)
	}
	return nil
}

// endShift answers DELETE /shifts/{id}: the shift ends now and stays
// listed as ended.
func (s *server) endShift(w http.ResponseWriter, r *http.Request) {
	out, err := s.Store.EndShift(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeObject(w, http.StatusOK, s.withStatus(out))
}

// safetyProblem is the 409 of a shift refused by safety rules: the rules
// and the load balancers they protect.
func safetyProblem(se *pools.SafetyError) *Problem {
	var rules, lbs []string
	for _, h := range se.Harms {
		if !slices.Contains(rules, h.Rule) {
			rules = append(rules, h.Rule)
		}
		for _, lb := range append([]string{h.LoadBalancer}, h.LoadBalancers...) {
			if lb != "" && !slices.Contains(lbs, lb) {
				lbs = append(lbs, lb)
			}
		}
	}
	return &Problem{
		Type: problemSafety, Title: "Safety rule", Status: http.StatusConflict,
		Detail: fmt.Sprintf("this would break %s for load balancer(s) %s; nothing was stored; an admin token overrides the rules: \"override\": true in the API, --override in glbctl, \"Override safety rules\" in the console",
			strings.Join(rules, ", "), strings.Join(lbs, ", ")),
		Safety: se.Harms,
	}
}
