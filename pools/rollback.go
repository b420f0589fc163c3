package pools

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// VersionStore restores a load balancer's version.
type VersionStore interface {
	// Restore makes r's writes in one transaction under one new global
	// revision (RestoreIn), audits each object written and the rollback
	// itself, and returns the revision.
	Restore(ctx context.Context, r *Restore) (int64, error)
}

// Objects decodes the load balancer, its pools and their monitors as they
// stood at v.
func (v *Version) Objects() (VersionObjects, error) {
	out := VersionObjects{Version: *v, Pools: []Pool{}, Monitors: []Monitor{}}
	raw, ok := v.objects[versionKey(KindLoadBalancer, v.lb)]
	if !ok {
		return out, nil
	}
	out.LoadBalancer = &LoadBalancer{}
	if err := json.Unmarshal(raw, out.LoadBalancer); err != nil {
		return out, fmt.Errorf("version %d: load_balancer: %w", v.Version, err)
	}
	var monitors []string
	for _, r := range out.LoadBalancer.PoolRefs() {
		raw, ok := v.objects[versionKey(KindPool, r.Pool)]
		if !ok || slices.ContainsFunc(out.Pools, func(p Pool) bool { return p.ID == r.Pool }) {
			continue
		}
		var p Pool
		if err := json.Unmarshal(raw, &p); err != nil {
			return out, fmt.Errorf("version %d: pool %s: %w", v.Version, r.Pool, err)
		}
		out.Pools = append(out.Pools, p)
		for _, m := range p.Group() {
			monitors = append(monitors, m.Monitor)
		}
	}
	slices.Sort(monitors)
	for _, id := range slices.Compact(monitors) {
		raw, ok := v.objects[versionKey(KindMonitor, id)]
		if !ok {
			continue
		}
		var m Monitor
		if err := json.Unmarshal(raw, &m); err != nil {
			return out, fmt.Errorf("version %d: monitor %s: %w", v.Version, id, err)
		}
		out.Monitors = append(out.Monitors, m)
	}
	return out, nil
}

// Rollback is what a rollback restored and wrote: the After of its
// audit entry (kind rollbacks).
type Rollback struct {
	LoadBalancer string `json:"load_balancer"`
	// Version and Revision name the version restored.
	Version  int             `json:"version"`
	Revision int64           `json:"revision"`
	Changes  []VersionChange `json:"changes"`
}

// RestoreWrite is one object a rollback writes: created when IfRevision
// is 0 (it must not exist), else replaced at exactly that revision.
type RestoreWrite struct {
	Object     Object
	IfRevision int64
}

// Restore is a rollback ready to write: what it restores and the writes,
// in dependency order (monitors, pools, the load balancer).
type Restore struct {
	Rollback
	Writes []RestoreWrite
}

// PlanRollback lists the writes that bring the load balancer's version n
// back: every object of the version whose content differs from the
// configuration the history was read with, each conditional on the
// revision read there, so that a write landing in between is never
// overwritten. Objects the load balancer refers to now but did not at n
// are left as they are. An empty plan means the objects stand as at n.
func (h *History) PlanRollback(lbID string, n int) (*Restore, error) {
	v, err := h.Find(lbID, n)
	if err != nil {
		return nil, err
	}
	objs, err := v.Objects()
	if err != nil {
		return nil, err
	}
	if objs.LoadBalancer == nil {
		return nil, &ValidationError{Errors: []FieldError{{Path: "version",
			Message: fmt.Sprintf("version %d is the deletion of load_balancer %s: there is nothing to restore", n, lbID)}}}
	}
	r := &Restore{Rollback: Rollback{LoadBalancer: lbID, Version: n, Revision: v.Revision, Changes: []VersionChange{}}}
	var targets []Object
	for i := range objs.Monitors {
		targets = append(targets, &objs.Monitors[i])
	}
	for i := range objs.Pools {
		targets = append(targets, &objs.Pools[i])
	}
	targets = append(targets, objs.LoadBalancer)
	current := currentObjects(h.Config)
	for _, o := range targets {
		w := RestoreWrite{Object: o}
		if raw, ok := current[versionKey(o.Kind(), o.ObjectMeta().ID)]; ok {
			cur := New(o.Kind())
			if err := json.Unmarshal(raw, cur); err != nil {
				return nil, err
			}
			same, err := SameContent(o, cur)
			if err != nil || same {
				if err != nil {
					return nil, err
				}
				continue
			}
			w.IfRevision = cur.ObjectMeta().Revision
		}
		r.Writes = append(r.Writes, w)
	}
	return r, nil
}

// SameContent reports whether a and b are equal but for what only the
// store sets (revision, timestamps).
func SameContent(a, b Object) (bool, error) {
	ja, err := ContentJSON(a)
	if err != nil {
		return false, err
	}
	jb, err := ContentJSON(b)
	return bytes.Equal(ja, jb), err
}

// ContentJSON is o's JSON without what the store sets on each write
// (revision, timestamps): what a rollback restores exactly.
func ContentJSON(o Object) ([]byte, error) {
	c, err := Clone(o)
	if err != nil {
		return nil, err
	}
	m := c.ObjectMeta()
	m.Revision, m.CreatedOn, m.ModifiedOn = 0, time.Time{}, time.Time{}
	return json.Marshal(c)
}

// oneRevision bumps the global revision once for all of a rollback's
// writes: one write, one revision, one version.
type oneRevision struct {
	Tx
	rev int64
}

func (t *oneRevision) BumpRevision() (int64, error) {
	if t.rev == 0 {
		rev, err := t.Tx.BumpRevision()
		if err != nil {
			return 0, err
		}
		t.rev = rev
	}
	return t.rev, nil
}

// RestoreIn makes r's writes inside rec, through the rules every write
// follows (CreateIn, ReplaceIn: full validation with references), under
// one global revision. It returns the audit entries the store appends:
// one per object written, and the rollback's own (kind rollbacks, by the
// caller in ctx), all at that revision.
func RestoreIn(ctx context.Context, rec *Recorder, r *Restore, now time.Time) ([]AuditEntry, int64, error) {
	if len(r.Writes) == 0 {
		return nil, 0, errors.New("restore: nothing to write")
	}
	tx := &oneRevision{Tx: rec}
	for _, w := range r.Writes {
		k, id := w.Object.Kind(), w.Object.ObjectMeta().ID
		var err error
		if w.IfRevision == 0 {
			var exists bool
			if exists, err = tx.Exists(k, id); err == nil && exists {
				err = fmt.Errorf("%s %s was created after the versions were read: %w", k.Singular(), id, ErrStale)
			}
			if err == nil {
				_, _, err = CreateIn(tx, w.Object, now)
			}
		} else {
			_, _, err = ReplaceIn(tx, w.Object, w.IfRevision, now)
		}
		if err != nil {
			return nil, 0, inObject(err, k, id)
		}
	}
	var entries []AuditEntry
	done := r.Rollback
	done.Changes = []VersionChange{}
	for _, w := range r.Writes {
		k, id := w.Object.Kind(), w.Object.ObjectMeta().ID
		e, err := rec.Entry(ctx, tx.rev, k, id, now)
		if err != nil {
			return nil, 0, err
		}
		entries = append(entries, e)
		done.Changes = append(done.Changes, VersionChange{Kind: k, ID: id, Action: e.Action})
	}
	e, err := NewAuditEntry(ctx, tx.rev, ActionCreate, KindRollback, r.LoadBalancer, nil, done, now)
	if err != nil {
		return nil, 0, err
	}
	return append(entries, e), tx.rev, nil
}

// inObject says which of a rollback's objects a validation error is
// about, in each field's path ("pools/eu.origins[0].address").
func inObject(err error, k Kind, id string) error {
	var ve *ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	out := &ValidationError{}
	for _, fe := range ve.Errors {
		out.Errors = append(out.Errors, FieldError{Path: versionKey(k, id) + "." + fe.Path, Message: fe.Message})
	}
	slices.SortStableFunc(out.Errors, func(a, b FieldError) int { return cmp.Compare(a.Path, b.Path) })
	return out
}
