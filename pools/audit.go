package pools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Actors that are not named tokens.
const (
	// ActorBootstrap is the --api-token bootstrap admin token.
	ActorBootstrap = "bootstrap"
	// ActorAnonymous writes when the API runs without any token (loopback
	// only).
	ActorAnonymous = "anonymous"
	// ActorCluster records health transitions the nodes agreed on.
	ActorCluster = "cluster"
	// ActorSystem writes that no request asked for (tests, tools).
	ActorSystem = "system"
)

// KindHealth is the audit kind of an agreed origin health transition; its
// object id is "pool/origin".
const KindHealth Kind = "health"

// KindToken is the kind of API tokens in the audit log; its object id is
// the token's name.
const KindToken Kind = "tokens"

// Actions of audit entries.
const (
	ActionCreate = "create"
	ActionUpdate = "update"
	ActionDelete = "delete"
	ActionHealth = "health"
)

// Caller says who asked for a write: the actor (a token's name,
// ActorBootstrap, ...) and the HTTP method. The API puts it in the
// request's context; the store records it with the write, in the same
// transaction.
type Caller struct {
	Actor  string
	Method string
}

type callerKey struct{}

// WithCaller returns ctx carrying who writes.
func WithCaller(ctx context.Context, o Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, o)
}

// CallerOf returns who writes in ctx: ActorSystem when nobody said.
func CallerOf(ctx context.Context) Caller {
	o, _ := ctx.Value(callerKey{}).(Caller)
	if o.Actor == "" {
		o.Actor = ActorSystem
	}
	return o
}

// AuditEntry is one accepted change: a write through a store, or an
// origin's health transition agreed by the cluster.
type AuditEntry struct {
	// ID orders entries: higher is later. Set by the store.
	ID int64 `json:"id"`
	// Revision is the global configuration revision of the write (0 for
	// health transitions, which change no configuration).
	Revision int64     `json:"revision"`
	Time     time.Time `json:"time"`
	Actor    string    `json:"actor"`
	// Method is the HTTP method of the request ("" when none).
	Method   string `json:"method"`
	Action   string `json:"action"`
	Kind     Kind   `json:"kind"`
	ObjectID string `json:"object_id"`
	// Before and After are the object as stored before and after the
	// write (null on create and delete respectively). For health
	// entries After is a HealthTransition.
	Before json.RawMessage `json:"before"`
	After  json.RawMessage `json:"after"`
}

// AuditFilter selects audit entries; zero fields match everything.
type AuditFilter struct {
	Kind Kind
	// Kinds: any of these (empty: any kind).
	Kinds    []Kind
	ObjectID string
	Actor    string
	Since    time.Time // entries at or after
	Until    time.Time // entries before
}

// Match reports whether e passes the filter.
func (f AuditFilter) Match(e *AuditEntry) bool {
	return (f.Kind == "" || e.Kind == f.Kind) &&
		(len(f.Kinds) == 0 || slices.Contains(f.Kinds, e.Kind)) &&
		(f.ObjectID == "" || e.ObjectID == f.ObjectID) &&
		(f.Actor == "" || e.Actor == f.Actor) &&
		(f.Since.IsZero() || !e.Time.Before(f.Since)) &&
		(f.Until.IsZero() || e.Time.Before(f.Until))
}

// AuditList is one page of entries, newest first, and the total count.
type AuditList struct {
	Items      []AuditEntry
	TotalCount int
}

// HealthTransition is an origin's new agreed state, with what each region
// saw when the cluster agreed on it.
type HealthTransition struct {
	Pool    string `json:"pool"`
	Origin  string `json:"origin"`
	Healthy bool   `json:"healthy"`
	Reason  string `json:"reason"`
	// Regions maps each reporting region to what its nodes saw.
	Regions map[string]RegionHealth `json:"regions"`
	// Node is the node that recorded the transition.
	Node string `json:"node"`
}

// RegionHealth is one region's view of an origin.
type RegionHealth struct {
	Nodes   int    `json:"nodes"`
	Healthy int    `json:"healthy"`
	Reason  string `json:"reason,omitempty"`
}

// AuditLog is the history of every change, kept by each store.
type AuditLog interface {
	// Audit returns one page of entries matching f, newest first.
	Audit(ctx context.Context, f AuditFilter, p Page) (AuditList, error)
	// RecordHealth records each transition whose state differs from the
	// last one recorded for that origin (an origin never recorded counts
	// as healthy), so that every node may report what it agreed on and
	// the log still holds each transition once.
	RecordHealth(ctx context.Context, at time.Time, ts []HealthTransition) error
	// PruneAudit deletes entries older than before and says how many.
	PruneAudit(ctx context.Context, before time.Time) (int64, error)
}

// Recorder is a Tx that remembers what the write rules stored and
// removed, so that a store can audit the write in the same transaction.
type Recorder struct {
	Tx
	changes []recorded
}

type recorded struct{ before, after Object }

// Recording wraps tx.
func Recording(tx Tx) *Recorder { return &Recorder{Tx: tx} }

// Put stores o and remembers it.
func (r *Recorder) Put(o, old Object) error {
	r.changes = append(r.changes, recorded{before: old, after: o})
	return r.Tx.Put(o, old)
}

// Remove deletes old and remembers it.
func (r *Recorder) Remove(old Object) error {
	r.changes = append(r.changes, recorded{before: old})
	return r.Tx.Remove(old)
}

// Entry is the audit entry of the write to (k, id) at revision rev, by
// the caller in ctx. Writes the rules make on the side (a zone's serial)
// are not entries of their own: they follow from the one recorded.
func (r *Recorder) Entry(ctx context.Context, rev int64, k Kind, id string, now time.Time) (AuditEntry, error) {
	var before, after Object
	found := false
	for _, c := range r.changes {
		o := c.after
		if o == nil {
			o = c.before
		}
		if o.Kind() == k && o.ObjectMeta().ID == id {
			if !found {
				before = c.before
			}
			after, found = c.after, true
		}
	}
	if !found {
		return AuditEntry{}, fmt.Errorf("audit: no write of %s %q recorded", k.Singular(), id)
	}
	action := ActionUpdate
	switch {
	case before == nil:
		action = ActionCreate
	case after == nil:
		action = ActionDelete
	case k == KindShift && after.(*Shift).EndedAt != nil && before.(*Shift).EndedAt == nil:
		action = ActionEnd
	}
	return NewAuditEntry(ctx, rev, action, k, id, before, after, now)
}

// OneEntry turns the write of one object of kind k (fn returns its id
// and the new revision) into a write that returns its audit entry, the
// form the stores append entries from.
func OneEntry(ctx context.Context, k Kind, now func() time.Time, fn func(*Recorder) (id string, rev int64, err error)) func(*Recorder) ([]AuditEntry, int64, error) {
	return func(rec *Recorder) ([]AuditEntry, int64, error) {
		id, rev, err := fn(rec)
		if err != nil {
			return nil, 0, err
		}
		e, err := rec.Entry(ctx, rev, k, id, now())
		return []AuditEntry{e}, rev, err
	}
}

// NewAuditEntry builds an entry of the caller in ctx; before and after are
// marshalled to JSON (nil is null).
func NewAuditEntry(ctx context.Context, rev int64, action string, k Kind, id string, before, after any, now time.Time) (AuditEntry, error) {
	o := CallerOf(ctx)
	e := AuditEntry{
		Revision: rev, Time: StoreTime(now), Actor: o.Actor, Method: o.Method,
		Action: action, Kind: k, ObjectID: id,
	}
	var err error
	if e.Before, err = rawJSON(before); err != nil {
		return e, err
	}
	e.After, err = rawJSON(after)
	return e, err
}

func rawJSON(v any) (json.RawMessage, error) {
	if v == nil {
		return json.RawMessage("null"), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("audit: encode: %w", err)
	}
	return b, nil
}

// HealthEntry is the audit entry of an agreed health transition.
func HealthEntry(ctx context.Context, h HealthTransition, at time.Time) (AuditEntry, error) {
	ctx = WithCaller(ctx, Caller{Actor: ActorCluster})
	return NewAuditEntry(ctx, 0, ActionHealth, KindHealth, h.Pool+"/"+h.Origin, nil, h, at)
}
