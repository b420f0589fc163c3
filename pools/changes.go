package pools

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// ErrChangeGap means a change feed cannot say what changed since the
// revision asked about: the log no longer reaches back that far, or the
// store is behind the reader (restored from a backup). The reader reloads
// the whole configuration instead.
var ErrChangeGap = errors.New("changes since that revision are no longer known")

// ChangeLogRevisions is how many revisions of changes a store keeps; a
// reader further behind gets ErrChangeGap.
const ChangeLogRevisions = 10000

// ChangeGap is the ErrChangeGap (wrapped) of a reader asking for the
// changes since revision since of a store whose log holds those after
// horizon up to rev; nil when the log covers since.
func ChangeGap(since, horizon, rev int64) error {
	if since < horizon || since > rev {
		return fmt.Errorf("changes since revision %d (kept: %d to %d): %w", since, horizon, rev, ErrChangeGap)
	}
	return nil
}

// ObjectChange is the state of one object after the last change to it.
type ObjectChange struct {
	Kind Kind
	ID   string
	// Revision is the global revision of the last write to the object.
	Revision int64
	// Object is the object as stored; nil when it was deleted.
	Object Object
}

// ChangeSet is what changed between two global revisions.
type ChangeSet struct {
	// Since is the revision asked about; Revision is the one the changes
	// bring a reader to.
	Since, Revision int64
	// Changes, one per object, ordered by Revision.
	Changes []ObjectChange
}

// ChangeFeed lets a node follow the configuration by its changes instead
// of reading all of it on every write, so that the cost of a change does
// not grow with the size of the estate.
type ChangeFeed interface {
	// Changes returns, in one consistent read, the objects written or
	// deleted after revision since, each in its latest state. It fails
	// with ErrChangeGap (wrapped) when it cannot know them.
	Changes(ctx context.Context, since int64) (*ChangeSet, error)
}

// Apply returns the configuration with cs applied. cfg is not modified
// and the result shares every unchanged object with it, so that applying
// a change costs the size of the lists, not of the objects in them. New
// objects go last, as the newest in creation order. cs.Since must be
// cfg.Revision.
func (cfg *Config) Apply(cs *ChangeSet) (*Config, error) {
	if cs.Since != cfg.Revision {
		return nil, errors.Join(ErrChangeGap, errors.New("change set does not start at the configuration's revision"))
	}
	out := *cfg
	out.Revision = cs.Revision
	byKind := map[Kind][]ObjectChange{}
	for _, c := range cs.Changes {
		byKind[c.Kind] = append(byKind[c.Kind], c)
	}
	out.Zones = applyKind(cfg.Zones, byKind[KindZone], func(z *Zone) string { return z.ID })
	out.Monitors = applyKind(cfg.Monitors, byKind[KindMonitor], func(m *Monitor) string { return m.ID })
	out.Pools = applyKind(cfg.Pools, byKind[KindPool], func(p *Pool) string { return p.ID })
	out.LoadBalancers = applyKind(cfg.LoadBalancers, byKind[KindLoadBalancer], func(l *LoadBalancer) string { return l.ID })
	out.Networks = applyKind(cfg.Networks, byKind[KindNetwork], func(n *Network) string { return n.ID })
	out.Shifts = applyKind(cfg.Shifts, byKind[KindShift], func(s *Shift) string { return s.ID })
	out.Rollouts = applyKind(cfg.Rollouts, byKind[KindRollout], func(r *Rollout) string { return r.ID })
	return &out, nil
}

// applyKind replaces, deletes and appends the changed objects of one kind
// in a copy of list; a list without changes is shared as it is.
func applyKind[T any, P interface {
	*T
	Object
}](list []T, changes []ObjectChange, id func(P) string) []T {
	if len(changes) == 0 {
		return list
	}
	out := slices.Clone(list)
	// A few changes (the usual case) find their objects by a scan; an
	// index of the whole list would cost more than the change. A change
	// set names each object once, so neither is updated as it goes.
	var pos map[string]int
	if len(changes) > 8 {
		pos = make(map[string]int, len(out))
		for i := range out {
			pos[id(&out[i])] = i
		}
	}
	find := func(key string) int {
		if pos != nil {
			if i, ok := pos[key]; ok {
				return i
			}
			return -1
		}
		for i := range out {
			if id(&out[i]) == key {
				return i
			}
		}
		return -1
	}
	deleted := false
	for _, c := range changes {
		i := find(c.ID)
		switch {
		case c.Object == nil && i >= 0:
			// The slot is emptied (id ""), and dropped below.
			out[i] = *new(T)
			deleted = true
		case c.Object == nil:
		case i >= 0:
			out[i] = *c.Object.(P)
		default:
			out = append(out, *c.Object.(P))
		}
	}
	if deleted {
		out = slices.DeleteFunc(out, func(v T) bool { return id(&v) == "" })
	}
	return out
}
