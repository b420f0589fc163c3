package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/glb-dns/glb/pools"
)

// action is what apply does to one object.
type action int

const (
	actUnchanged action = iota
	actCreate
	actUpdate
	actDelete
)

// step is one object of a plan.
type step struct {
	act  action
	kind pools.Kind
	id   string
	// rev is the object's revision on the server when the plan was made;
	// 0 when it is not there. Writes send it in If-Match.
	rev int64
	// entry is the object in the file (nil for a deletion).
	entry *entry
	// name is what the object is called on the server, for deletions.
	name string
	// fields lists the differences of an update.
	fields []fieldDiff
	// referrers are the file's objects that still refer to an object to
	// delete: the server will refuse the deletion.
	referrers []pools.Referrer
	// rollout: with apply --staged, the new weights of the origins this
	// pool update changes, started as a rollout instead of written; order
	// likewise a load balancer's new default pool order; staging says in
	// what steps (for the plan).
	rollout map[string]float64
	order   []string
	staging string
}

// staged reports whether apply --staged starts this update as a rollout.
func (s *step) staged() bool { return s.rollout != nil || s.order != nil }

func (s *step) key() string { return string(s.kind) + "/" + s.id }

// plan is every step in the order apply takes them: creations and updates
// in applyOrder, then deletions in the reverse order.
type plan struct {
	steps []*step
	prune bool
	// kept lists the objects on the server that the file does not name,
	// when they are not pruned: apply leaves them, but a reader of the
	// diff should know they exist.
	kept []string
}

// changes counts the steps that write.
func (p *plan) changes() int {
	n := 0
	for _, s := range p.steps {
		if s.act != actUnchanged {
			n++
		}
	}
	return n
}

// revisions is what a saved plan records: every object the plan looked
// at, and the revision it saw (0: absent).
func (p *plan) revisions() map[string]int64 {
	out := make(map[string]int64, len(p.steps))
	for _, s := range p.steps {
		out[s.key()] = s.rev
	}
	return out
}

// state is what the server holds, by kind and id.
type state map[pools.Kind]map[string]pools.Object

func readState(ctx context.Context, c *client) (state, error) {
	st := state{}
	for _, k := range applyOrder {
		objs, err := c.objects(ctx, k)
		if err != nil {
			return nil, err
		}
		st[k] = make(map[string]pools.Object, len(objs))
		for _, o := range objs {
			st[k][o.ObjectMeta().ID] = o
		}
	}
	return st, nil
}

// makePlan compares the file with the server's state. With prune, objects
// the file does not name are deleted. Before anything is written, every
// object is validated against the objects it refers to, as the server
// would, so that a bad reference is reported with its line and not after
// half the file was applied.
func makePlan(f *configFile, st state, prune bool) (*plan, error) {
	p := &plan{prune: prune}
	inFile := map[string]bool{}
	for _, k := range applyOrder {
		for _, e := range f.entries {
			if e.kind != k {
				continue
			}
			inFile[e.key()] = true
			cur, ok := st[k][e.id]
			if !ok {
				p.steps = append(p.steps, &step{act: actCreate, kind: k, id: e.id, entry: e})
				continue
			}
			s := &step{act: actUnchanged, kind: k, id: e.id, rev: cur.ObjectMeta().Revision, entry: e}
			diffs, err := diffObjects(cur, e.obj)
			if err != nil {
				return nil, err
			}
			if len(diffs) > 0 {
				s.act, s.fields = actUpdate, diffs
			}
			p.steps = append(p.steps, s)
		}
	}
	if !prune {
		for _, k := range applyOrder {
			for _, id := range slices.Sorted(maps.Keys(st[k])) {
				if !inFile[string(k)+"/"+id] {
					p.kept = append(p.kept, string(k)+"/"+id)
				}
			}
		}
	}
	if prune {
		for _, k := range slices.Backward(applyOrder) {
			var dels []*step
			for id, o := range st[k] {
				if !inFile[string(k)+"/"+id] {
					dels = append(dels, &step{act: actDelete, kind: k, id: id, rev: o.ObjectMeta().Revision,
						name: displayName(o), referrers: fileReferrers(f, k, id)})
				}
			}
			slices.SortFunc(dels, func(a, b *step) int { return cmp.Compare(a.id, b.id) })
			p.steps = append(p.steps, dels...)
		}
	}
	if err := validate(f, st); err != nil {
		return nil, err
	}
	return p, nil
}

// validate runs each object's own validation with references resolved
// against the file's objects and the server's. Objects about to be pruned
// still count: a deletion comes last and the server refuses it (409) while
// something refers to the object, which is the answer apply shows.
func validate(f *configFile, st state) error {
	refs := planRefs{file: map[string]pools.Object{}, st: st}
	for _, e := range f.entries {
		refs.file[e.key()] = e.obj
	}
	errs := &fileErrors{name: f.name}
	for _, e := range f.entries {
		err := e.obj.Validate(refs)
		if ve, ok := err.(*pools.ValidationError); ok {
			for _, fe := range ve.Errors {
				errs.add(f.lines, within(e.path, fe.Path), "%s", fe.Message)
			}
		} else if err != nil {
			errs.add(f.lines, e.path, "%v", err)
		}
	}
	return errs.err()
}

// planRefs answers pools.References for validate.
type planRefs struct {
	file map[string]pools.Object
	st   state
}

func (r planRefs) lookup(k pools.Kind, id string) pools.Object {
	if o, ok := r.file[string(k)+"/"+id]; ok {
		return o
	}
	return r.st[k][id]
}

// fileReferrers lists the file's objects that refer to (k, id). With
// --prune they are all that will be left to refer to it: whatever else
// refers to it on the server is deleted first.
func fileReferrers(f *configFile, k pools.Kind, id string) []pools.Referrer {
	var ps []pools.Pool
	var lbs []pools.LoadBalancer
	for _, e := range f.entries {
		switch o := e.obj.(type) {
		case *pools.Pool:
			ps = append(ps, *o)
		case *pools.LoadBalancer:
			lbs = append(lbs, *o)
		}
	}
	return pools.ReferrersIn(k, id, ps, lbs)
}

func (r planRefs) ZoneName(id string) (string, bool) {
	z, ok := r.lookup(pools.KindZone, id).(*pools.Zone)
	if !ok {
		return "", false
	}
	return pools.CanonicalName(z.Name), true
}

func (r planRefs) PoolExists(id string) bool    { return r.lookup(pools.KindPool, id) != nil }
func (r planRefs) MonitorExists(id string) bool { return r.lookup(pools.KindMonitor, id) != nil }

// displayName is what an object is called, for messages.
func displayName(o pools.Object) string {
	switch v := o.(type) {
	case *pools.Zone:
		return v.Name
	case *pools.Pool:
		return v.Name
	case *pools.LoadBalancer:
		return v.Name
	case *pools.Network:
		return v.CIDR
	case *pools.Monitor:
		if v.Description != "" {
			return v.Description
		}
		return string(v.Type)
	}
	return ""
}

// describe renders a step's header line: "+ pools/web", "~ pools/web
// (revision 3)", "- networks/office (198.51.100.0/24)".
func describe(s *step) string {
	switch s.act {
	case actCreate:
		return "+ " + s.key()
	case actUpdate:
		if s.staged() {
			return fmt.Sprintf("» %s (revision %d): rollout, %s", s.key(), s.rev, s.staging)
		}
		return fmt.Sprintf("~ %s (revision %d)", s.key(), s.rev)
	case actDelete:
		d := fmt.Sprintf("- %s (%s, revision %d)", s.key(), s.name, s.rev)
		for _, r := range s.referrers {
			d += fmt.Sprintf("\n    refused: still referred to by %s %s (%s) in the file", r.Kind, r.ID, r.Name)
		}
		return d
	}
	return "= " + s.key()
}
