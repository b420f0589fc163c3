package pools

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// A load balancer's versions come from the audit log, not from a table of
// their own: version N is the configuration as it stood after the N-th
// write (one global revision) that changed the load balancer or a pool or
// monitor it referred to at that moment, counted among the writes the log
// still keeps, oldest first. Every node reads the same log (one database,
// or the one embedded file), so every node numbers alike; a write that
// touches nothing of the load balancer makes no version of it. The log is
// pruned after --audit-retention: versions older than that are gone, and
// the numbers then start again at the oldest write kept, while a version's
// revision never changes.

// KindRollback is the audit kind of a rollback of a load balancer to one
// of its versions: object id the load balancer's, After a Rollback. The
// objects the rollback wrote have entries of their own at the same
// revision.
const KindRollback Kind = "rollbacks"

// VersionKinds are the kinds whose writes make a load balancer's versions.
var VersionKinds = []Kind{KindLoadBalancer, KindPool, KindMonitor}

// VersionChange is one object a version's write changed.
type VersionChange struct {
	Kind   Kind   `json:"kind"`
	ID     string `json:"id"`
	Action string `json:"action"`
}

// Version is one version of a load balancer: the write that made it.
type Version struct {
	Version  int       `json:"version"`
	Revision int64     `json:"revision"`
	Time     time.Time `json:"time"`
	Actor    string    `json:"actor"`
	Method   string    `json:"method"`
	// RollbackTo is the version this write restored (0: not a rollback).
	RollbackTo int             `json:"rollback_to,omitempty"`
	Changes    []VersionChange `json:"changes"`

	// objects are the load balancer, its pools and their monitors as they
	// stood after the write, by versionKey.
	objects map[string]json.RawMessage
	lb      string
	// restored is the revision of the version a rollback restored.
	restored int64
}

// VersionObjects is a version and the objects as they stood at it: the
// load balancer (null when the version is its deletion), the pools it
// referred to (in the order of its references) and their monitors (by id).
type VersionObjects struct {
	Version
	LoadBalancer *LoadBalancer `json:"load_balancer"`
	Pools        []Pool        `json:"pools"`
	Monitors     []Monitor     `json:"monitors"`
}

// VersionFilter selects versions; zero fields match everything.
type VersionFilter struct {
	// Kind and ID: versions that changed an object of that kind (and id).
	Kind  Kind
	ID    string
	Actor string
	Since time.Time // at or after
	Until time.Time // before
}

// Match reports whether v passes the filter.
func (f VersionFilter) Match(v *Version) bool {
	changed := f.Kind == "" && f.ID == ""
	for _, c := range v.Changes {
		if (f.Kind == "" || c.Kind == f.Kind) && (f.ID == "" || c.ID == f.ID) {
			changed = true
		}
	}
	return changed && (f.Actor == "" || v.Actor == f.Actor) &&
		(f.Since.IsZero() || !v.Time.Before(f.Since)) &&
		(f.Until.IsZero() || v.Time.Before(f.Until))
}

func versionKey(k Kind, id string) string { return string(k) + "/" + id }

// History is a load balancer's versions, oldest first, and the
// configuration they were read with (a rollback's writes are conditional
// on its revisions).
type History struct {
	Versions []Version
	Config   *Config
}

// ReadHistory reads the configuration, then the audit log's writes of the
// versioned kinds and rollbacks, and numbers the load balancer's
// versions. Writes after the configuration's revision are left out: the
// history is the configuration's own. ErrNotFound when the load balancer
// has no version and is not stored.
func ReadHistory(ctx context.Context, s Store, lbID string) (*History, error) {
	cfg, err := s.Config(ctx)
	if err != nil {
		return nil, err
	}
	var entries []AuditEntry
	f := AuditFilter{Kinds: append(slices.Clone(VersionKinds), KindRollback)}
	for page := 1; ; page++ {
		res, err := s.Audit(ctx, f, Page{Page: page, PerPage: MaxPerPage})
		if err != nil {
			return nil, err
		}
		entries = append(entries, res.Items...)
		if len(res.Items) < MaxPerPage || len(entries) >= res.TotalCount {
			break
		}
	}
	vs, err := versionsOf(cfg, entries, lbID)
	if err != nil {
		return nil, err
	}
	if len(vs) == 0 {
		if _, ok := currentObjects(cfg)[versionKey(KindLoadBalancer, lbID)]; !ok {
			return nil, fmt.Errorf("load_balancer %q: %w", lbID, ErrNotFound)
		}
	}
	return &History{Versions: vs, Config: cfg}, nil
}

// Find returns version n, or ErrNotFound naming how many there are.
func (h *History) Find(lbID string, n int) (*Version, error) {
	if n < 1 || n > len(h.Versions) {
		return nil, fmt.Errorf("load_balancer %q has %d versions, not a version %d: %w", lbID, len(h.Versions), n, ErrNotFound)
	}
	return &h.Versions[n-1], nil
}

func currentObjects(cfg *Config) map[string]json.RawMessage {
	state := map[string]json.RawMessage{}
	put := func(o Object) {
		if b, err := json.Marshal(o); err == nil {
			state[versionKey(o.Kind(), o.ObjectMeta().ID)] = b
		}
	}
	for i := range cfg.LoadBalancers {
		put(&cfg.LoadBalancers[i])
	}
	for i := range cfg.Pools {
		put(&cfg.Pools[i])
	}
	for i := range cfg.Monitors {
		put(&cfg.Monitors[i])
	}
	return state
}

// versionsOf walks the log back from the configuration: the state after
// each write is what the configuration holds, with the Before of every
// later write put back. Going backwards needs no entry older than the
// oldest version, so a pruned log still gives every version it numbers
// complete objects.
func versionsOf(cfg *Config, entries []AuditEntry, lbID string) ([]Version, error) {
	state := currentObjects(cfg)
	entries = slices.DeleteFunc(slices.Clone(entries), func(e AuditEntry) bool {
		return e.Revision < 1 || e.Revision > cfg.Revision
	})
	slices.SortStableFunc(entries, func(a, b AuditEntry) int {
		return cmp.Or(cmp.Compare(b.Revision, a.Revision), cmp.Compare(b.ID, a.ID))
	})
	var out []Version
	lbKey := versionKey(KindLoadBalancer, lbID)
	after, err := closure(state, lbID)
	if err != nil {
		return nil, err
	}
	for len(entries) > 0 {
		n := 1
		for n < len(entries) && entries[n].Revision == entries[0].Revision {
			n++
		}
		group := entries[:n]
		entries = entries[n:]
		// What the write left of the load balancer's objects, before it is
		// undone in place.
		stood := make(map[string]json.RawMessage, len(after))
		for k := range after {
			if raw, ok := state[k]; ok {
				stood[k] = raw
			}
		}
		moved := false
		for _, e := range group {
			if e.Kind == KindRollback {
				continue
			}
			k := versionKey(e.Kind, e.ObjectID)
			if isNull(e.Before) {
				delete(state, k)
			} else {
				state[k] = e.Before
			}
			// Only a write of the load balancer or of a pool it uses
			// moves its references: the rest keeps the closure as it is.
			moved = moved || k == lbKey || (e.Kind == KindPool && after[k])
		}
		// A write that changes the references (a pool dropped, the load
		// balancer deleted) touches what was referred to before it too.
		was := after
		if moved {
			if was, err = closure(state, lbID); err != nil {
				return nil, err
			}
		}
		if v, ok := versionOf(group, after, was, stood, lbID); ok {
			out = append(out, v)
		}
		after = was
	}
	slices.Reverse(out)
	for i := range out {
		out[i].Version = i + 1
	}
	// A rollback names the version it restored by revision, which
	// pruning never changes; its number follows from the list.
	for i := range out {
		for j := range out[:i] {
			if out[i].restored != 0 && out[j].Revision == out[i].restored {
				out[i].RollbackTo = out[j].Version
			}
		}
	}
	return out, nil
}

func isNull(b json.RawMessage) bool {
	return len(bytes.TrimSpace(b)) == 0 || bytes.Equal(bytes.TrimSpace(b), []byte("null"))
}

// closure is the set of keys of the load balancer, the pools it refers to
// and their monitors in state (empty when the load balancer is not there).
func closure(state map[string]json.RawMessage, lbID string) (map[string]bool, error) {
	keys := map[string]bool{}
	raw, ok := state[versionKey(KindLoadBalancer, lbID)]
	if !ok {
		return keys, nil
	}
	keys[versionKey(KindLoadBalancer, lbID)] = true
	var lb LoadBalancer
	if err := json.Unmarshal(raw, &lb); err != nil {
		return nil, fmt.Errorf("versions: load_balancer %s: %w", lbID, err)
	}
	for _, r := range lb.PoolRefs() {
		k := versionKey(KindPool, r.Pool)
		if keys[k] {
			continue
		}
		keys[k] = true
		raw, ok := state[k]
		if !ok {
			continue
		}
		var p Pool
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, fmt.Errorf("versions: pool %s: %w", r.Pool, err)
		}
		for _, m := range p.Group() {
			keys[versionKey(KindMonitor, m.Monitor)] = true
		}
	}
	return keys, nil
}

// versionOf is the version a write (its entries, one revision) makes of
// the load balancer, if it touched what the load balancer referred to
// before or after it; stood holds the objects it left.
func versionOf(group []AuditEntry, after, before map[string]bool, stood map[string]json.RawMessage, lbID string) (Version, bool) {
	v := Version{Revision: group[0].Revision, lb: lbID}
	for _, e := range group {
		if e.Kind == KindRollback {
			var r Rollback
			if e.ObjectID == lbID && json.Unmarshal(e.After, &r) == nil {
				v.restored = r.Revision
			}
			continue
		}
		k := versionKey(e.Kind, e.ObjectID)
		if !after[k] && !before[k] {
			continue
		}
		if len(v.Changes) == 0 {
			v.Time, v.Actor, v.Method = e.Time, e.Actor, e.Method
		}
		v.Changes = append(v.Changes, VersionChange{Kind: e.Kind, ID: e.ObjectID, Action: e.Action})
	}
	if len(v.Changes) == 0 {
		return v, false
	}
	v.objects = stood
	slices.SortFunc(v.Changes, func(a, b VersionChange) int {
		return cmp.Or(cmp.Compare(slices.Index(VersionKinds, a.Kind), slices.Index(VersionKinds, b.Kind)), cmp.Compare(a.ID, b.ID))
	})
	return v, true
}
