package pools

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// KindShift is the kind of shifts. It is stored and follows the change
// feed like the other kinds, but is not in Kinds: a shift is an
// operator's action of the moment, not configuration that files keep, so
// the generic collections and glbctl's apply and export leave it alone.
const KindShift Kind = "shifts"

// MaxShiftDuration bounds a shift: one forgotten must end by itself.
const MaxShiftDuration = 7 * 24 * time.Hour

// Shift takes traffic away from a pool, an origin or a zone (the origins
// whose zone label it is, in every pool) for a while, for every load
// balancer or the listed ones. It is in force in [StartsAt, ExpiresAt),
// or until EndedAt when ended early; every node decides that from its own
// clock, so no write is needed for a shift to end.
type Shift struct {
	Meta
	Target ShiftTarget `json:"target"`
	// LoadBalancers the shift applies to (ids); empty: every one.
	LoadBalancers []string `json:"load_balancers"`
	Reason        string   `json:"reason"`
	// Duration ("90s", "2h", "3d") sets ExpiresAt from StartsAt on
	// create, when ExpiresAt is not given.
	Duration string `json:"duration,omitempty"`
	// StartsAt defaults to the time of the create; a later time schedules
	// the shift.
	StartsAt  time.Time  `json:"starts_at"`
	ExpiresAt time.Time  `json:"expires_at"`
	EndedAt   *time.Time `json:"ended_at"`
	// Override: an admin started the shift although it breaks a safety
	// rule; Overridden lists what it broke then.
	Override   bool        `json:"override"`
	Overridden []ShiftHarm `json:"overridden,omitempty"`
	// Status is derived on read from the clock (ShiftScheduled, ...); it
	// is never stored.
	Status string `json:"status,omitempty"`
}

// ShiftTarget names what a shift moves traffic away from: exactly one of
// a pool id, an origin ("pool/origin") or a zone label.
type ShiftTarget struct {
	Pool   string `json:"pool,omitempty"`
	Origin string `json:"origin,omitempty"`
	Zone   string `json:"zone,omitempty"`
}

// String is the target as an operator reads it: "pool web".
func (t ShiftTarget) String() string {
	switch {
	case t.Pool != "":
		return "pool " + t.Pool
	case t.Origin != "":
		return "origin " + t.Origin
	}
	return "zone " + t.Zone
}

// OriginParts splits an origin target into its pool id and origin name.
func (t ShiftTarget) OriginParts() (pool, origin string, ok bool) {
	return strings.Cut(t.Origin, "/")
}

// Shift states, derived from the clock.
const (
	ShiftScheduled = "scheduled"
	ShiftActive    = "active"
	ShiftEnded     = "ended"   // ended early (DELETE)
	ShiftExpired   = "expired" // reached its expiry
)

// ShiftHarm is a safety rule a shift would break on a load balancer.
type ShiftHarm struct {
	Rule         string `json:"rule"`
	LoadBalancer string `json:"load_balancer"`
	Name         string `json:"name"`
	// LoadBalancers are those a global rule (Rule "global. ...",
	// LoadBalancer empty) concerns: the ones the shift would change.
	LoadBalancers []string `json:"load_balancers,omitempty"`
	// Serving counts the load balancer's steering pools that would still
	// serve; Minimum is what the rule asks. For a global rule they are
	// what it counts (zones, pools, serving load balancers) and its
	// limit (a percentage for min_serving_load_balancers_percent).
	Serving int    `json:"serving"`
	Minimum int    `json:"minimum"`
	Message string `json:"message"`
}

// Safety rule names, as problem+json and the audit log name them.
const (
	// RuleMinServingPools: at least safety.min_serving_pools (default 1)
	// of a load balancer's steering pools (default, region and country
	// pools; not the fallback) stay serving: enabled, healthy, not
	// shifted.
	RuleMinServingPools = "min_serving_pools"
	// RuleMaxShiftedZones: at most safety.max_shifted_zones zones are
	// shifted at once for the load balancer (0: no limit).
	RuleMaxShiftedZones = "max_shifted_zones"
)

func (s *Shift) Kind() Kind        { return KindShift }
func (s *Shift) ObjectMeta() *Meta { return &s.Meta }

func (s *Shift) UnmarshalJSON(b []byte) error {
	type plain Shift
	return decodeOver(b, (*plain)(s), plain{})
}

// State is the shift's state at now.
func (s *Shift) State(now time.Time) string {
	switch {
	case s.EndedAt != nil && !s.EndedAt.After(now) && s.EndedAt.Before(s.ExpiresAt):
		return ShiftEnded
	case !now.Before(s.ExpiresAt):
		return ShiftExpired
	case now.Before(s.StartsAt):
		return ShiftScheduled
	}
	return ShiftActive
}

// Scheduled reports whether the shift was created to start later: its
// start is then a moment of its own, recorded by the clock, where an
// immediate shift's create is its start.
func (s *Shift) Scheduled() bool { return s.StartsAt.After(s.CreatedOn) }

// Started reports whether a scheduled shift's start has come by now
// (it was not ended before it).
func (s *Shift) Started(now time.Time) bool {
	return !now.Before(s.StartsAt) && (s.EndedAt == nil || s.EndedAt.After(s.StartsAt))
}

// ActiveAt reports whether the shift is in force at now.
func (s *Shift) ActiveAt(now time.Time) bool { return s.State(now) == ShiftActive }

// End is when the shift stops being in force: its expiry, or when it was
// ended early.
func (s *Shift) End() time.Time {
	if s.EndedAt != nil && s.EndedAt.Before(s.ExpiresAt) {
		return *s.EndedAt
	}
	return s.ExpiresAt
}

// AppliesTo reports whether the shift concerns load balancer id.
func (s *Shift) AppliesTo(lb string) bool {
	if len(s.LoadBalancers) == 0 {
		return true
	}
	for _, id := range s.LoadBalancers {
		if id == lb {
			return true
		}
	}
	return false
}

// NextShiftBoundary is the earliest start or end after now among shifts:
// when a node must look at them again. Zero when there is none.
func NextShiftBoundary(shifts []Shift, now time.Time) time.Time {
	var next time.Time
	consider := func(t time.Time) {
		if t.After(now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for i := range shifts {
		consider(shifts[i].StartsAt)
		consider(shifts[i].End())
	}
	return next
}

// ParseShiftDuration reads "90s", "2h", "1h30m" (Go's form) or "3d".
func ParseShiftDuration(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err != nil {
			return 0, fmt.Errorf("%q: want a number of days such as 3d, or a duration such as 2h", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q: want a duration such as 90s, 2h or 3d", s)
	}
	return d, nil
}

// startTime is when something asked to start at (zero: now) starts: now
// at the earliest, at the store's precision.
func startTime(at, now time.Time) time.Time {
	if at.IsZero() || at.Before(now) {
		at = now
	}
	return StoreTime(at)
}

// Prepare fills a new shift's times from now: StartsAt defaults to now,
// ExpiresAt to StartsAt + Duration. It reports every field at fault,
// those of Validate included, so a create names them all at once.
func (s *Shift) Prepare(now time.Time) error {
	var e errs
	now = StoreTime(now)
	s.StartsAt = startTime(s.StartsAt, now)
	switch {
	case s.Duration != "" && !s.ExpiresAt.IsZero():
		e.add("duration", "give a duration or expires_at, not both")
	case s.Duration != "":
		d, err := ParseShiftDuration(s.Duration)
		if err != nil {
			e.add("duration", "%s", err.Error())
		} else if d <= 0 {
			e.add("duration", "must be positive")
		} else {
			s.ExpiresAt = s.StartsAt.Add(d)
		}
	case s.ExpiresAt.IsZero():
		e.add("duration", "a duration or expires_at is required")
	}
	s.ExpiresAt = StoreTime(s.ExpiresAt)
	if s.EndedAt != nil {
		e.add("ended_at", "is set by ending the shift (DELETE), not on create")
	}
	if len(s.Overridden) > 0 {
		e.add("overridden", "is read-only")
	}
	s.Status = ""
	var ve *ValidationError
	if err := s.Validate(nil); err != nil {
		if !errors.As(err, &ve) {
			return err
		}
		e.list = append(e.list, ve.Errors...)
	}
	if len(e.list) > 0 {
		return e.err()
	}
	if !s.ExpiresAt.After(now) {
		e.add("expires_at", "must be in the future")
	}
	return e.err()
}

// Validate checks a shift on its own; refs may be nil (pools are
// checked against the configuration by the caller, which has it).
func (s *Shift) Validate(refs References) error {
	var e errs
	n := 0
	for _, v := range []string{s.Target.Pool, s.Target.Origin, s.Target.Zone} {
		if v != "" {
			n++
		}
	}
	if n != 1 {
		e.add("target", "give exactly one of pool, origin (\"pool/origin\") or zone")
	}
	if s.Target.Origin != "" {
		p, o, ok := s.Target.OriginParts()
		if !ok || p == "" || o == "" {
			e.add("target.origin", "want \"pool/origin\", the pool's id and the origin's name")
		} else if refs != nil && !refs.PoolExists(p) {
			e.add("target.origin", "pool %q does not exist", p)
		}
	}
	if s.Target.Pool != "" && refs != nil && !refs.PoolExists(s.Target.Pool) {
		e.add("target.pool", "pool %q does not exist", s.Target.Pool)
	}
	seen := map[string]bool{}
	for i, id := range s.LoadBalancers {
		if id == "" {
			e.add(fmt.Sprintf("load_balancers[%d]", i), "must not be empty")
		}
		if seen[id] {
			e.add(fmt.Sprintf("load_balancers[%d]", i), "%q is listed twice", id)
		}
		seen[id] = true
	}
	if strings.TrimSpace(s.Reason) == "" {
		e.add("reason", "a reason is required: the audit log and the console show it")
	} else if len(s.Reason) > 1000 {
		e.add("reason", "longer than 1000 characters")
	}
	if !s.ExpiresAt.IsZero() && !s.StartsAt.IsZero() {
		switch d := s.ExpiresAt.Sub(s.StartsAt); {
		case d <= 0:
			e.add("expires_at", "must be after starts_at")
		case d > MaxShiftDuration:
			e.add("expires_at", "at most 7 days after starts_at")
		}
	}
	return e.err()
}

// ShiftStore starts and ends shifts. Reads go through Get and List with
// KindShift.
type ShiftStore interface {
	// StartShift stores a new shift (prepared and validated by the
	// caller) unless guard, called inside the write's transaction with
	// every stored shift, returns an error: writers serialise there, so
	// two shifts that are each safe but not together cannot both pass.
	StartShift(ctx context.Context, s *Shift, guard func(stored []Shift) error) (*Shift, error)
	// EndShift ends a scheduled or active shift at now (ErrNotFound; a
	// *ValidationError when it has already ended).
	EndShift(ctx context.Context, id string) (*Shift, error)
	// RecordShiftExpiry audits that shift s reached its expiry and adds
	// its event, once however many nodes report it, from the shift as
	// stored: nothing when ShiftRecordDue says none is due. DNS never
	// waits for it.
	RecordShiftExpiry(ctx context.Context, s *Shift) error
	// RecordShiftStart does the same for the start of a shift that was
	// scheduled (Scheduled): its create was not its start.
	RecordShiftStart(ctx context.Context, s *Shift) error
	// PruneShifts deletes the shifts that stopped being in force (ended
	// or expired) before the given time, in one write that moves the
	// revision only when it deletes something, and returns how many.
	// Their start, end and expiry stay in the audit log.
	PruneShifts(ctx context.Context, before time.Time) (int, error)
}

// ShiftRetention is how long a shift is kept after it stopped being in
// force: listed as ended or expired, then pruned (its audit entries
// stay, for the audit log's own retention).
const ShiftRetention = 30 * 24 * time.Hour

// PruneShiftsIn deletes inside tx the shifts of list that ended or
// expired before before; rev is 0 when there were none.
func PruneShiftsIn(tx Tx, list []Shift, before time.Time) (n int, rev int64, err error) {
	var old []*Shift
	for i := range list {
		if sh := &list[i]; sh.End().Before(before) {
			old = append(old, sh)
		}
	}
	if len(old) == 0 {
		return 0, 0, nil
	}
	if rev, err = tx.BumpRevision(); err != nil {
		return 0, 0, err
	}
	for _, sh := range old {
		if err := tx.Remove(sh); err != nil {
			return 0, 0, err
		}
	}
	return len(old), rev, nil
}

// ActionExpire is the audit action of a shift that reached its expiry;
// ActionEnd of one ended early; ActionStart of a scheduled shift that
// reached its start.
const (
	ActionExpire = "expire"
	ActionEnd    = "end"
	ActionStart  = "start"
)

// StartShiftIn stores s inside tx after guard accepts it.
func StartShiftIn(tx Tx, s *Shift, guard func([]Shift) error, list func() ([]Shift, error), now time.Time) (*Shift, int64, error) {
	return createChecked(tx, s, func() error {
		stored, err := list()
		if err != nil || guard == nil {
			return err
		}
		return guard(stored)
	}, now)
}

// createChecked stores o inside tx once check accepts it. check runs
// after the revision is bumped, so that writers serialise before it reads
// what they write over; CreateIn bumps once more, and o's revision is the
// later one.
func createChecked[T Object](tx Tx, o T, check func() error, now time.Time) (T, int64, error) {
	var none T
	if _, err := tx.BumpRevision(); err != nil {
		return none, 0, err
	}
	if err := check(); err != nil {
		return none, 0, err
	}
	out, rev, err := CreateIn(tx, o, now)
	if err != nil {
		return none, 0, err
	}
	return out.(T), rev, nil
}

// EndShiftIn ends shift id at now inside tx.
func EndShiftIn(tx Tx, id string, now time.Time) (*Shift, int64, error) {
	o, err := tx.Get(KindShift, id)
	if err != nil {
		return nil, 0, err
	}
	s := o.(*Shift)
	now = StoreTime(now)
	if st := s.State(now); st == ShiftEnded || st == ShiftExpired {
		var e errs
		e.add("id", "shift %s has already %s", id, st)
		return nil, 0, e.err()
	}
	s.EndedAt = &now
	out, rev, err := ReplaceIn(tx, s, 0, now)
	if err != nil {
		return nil, 0, err
	}
	return out.(*Shift), rev, nil
}

// SafetyError refuses a shift that would break safety rules; nothing was
// stored. The API answers it with 409.
type SafetyError struct {
	Harms []ShiftHarm
}

func (e *SafetyError) Error() string {
	parts := make([]string, len(e.Harms))
	for i, h := range e.Harms {
		on := " on load balancer " + h.LoadBalancer
		if h.LoadBalancer == "" {
			on = " across load balancers " + strings.Join(h.LoadBalancers, ", ")
		}
		parts[i] = h.Rule + on + ": " + h.Message
	}
	return "the shift would break safety rules: " + strings.Join(parts, "; ")
}

// ActorClock records what the clock did: a shift reaching its expiry.
const ActorClock = "clock"

// ShiftExpiryEntry is the audit entry of sh reaching its expiry, dated at
// the expiry whoever notices it.
func ShiftExpiryEntry(ctx context.Context, sh *Shift) (AuditEntry, error) {
	ctx = WithCaller(ctx, Caller{Actor: ActorClock})
	after := *sh
	after.Status = ShiftExpired
	return NewAuditEntry(ctx, sh.Revision, ActionExpire, KindShift, sh.ID, nil, &after, sh.ExpiresAt)
}

// ShiftRecordDue says whether stored, the shift as the store holds it
// (nil: not stored, pruned), reached state (ShiftEventStarted or
// ShiftEventExpired) by now, so that its record is written. A node may
// ask from an older configuration (one cut off from the store while the
// shift was ended early or cancelled): false with no error means nothing
// is to be recorded, ever (a cancelled shift never started, one ended
// early never expires); an error means not yet by this clock, to be
// asked again.
func ShiftRecordDue(stored *Shift, state string, now time.Time) (bool, error) {
	if stored == nil {
		return false, nil
	}
	switch state {
	case ShiftEventStarted:
		switch {
		case !stored.Scheduled() || stored.EndedAt != nil && !stored.EndedAt.After(stored.StartsAt):
			return false, nil
		case now.Before(stored.StartsAt):
			return false, fmt.Errorf("shift %s starts at %s, not yet", stored.ID, stored.StartsAt.Format(time.RFC3339Nano))
		}
		return true, nil
	case ShiftEventExpired:
		switch stored.State(now) {
		case ShiftExpired:
			return true, nil
		case ShiftEnded:
			return false, nil
		}
		return false, fmt.Errorf("shift %s expires at %s, not yet", stored.ID, stored.ExpiresAt.Format(time.RFC3339Nano))
	}
	return false, fmt.Errorf("no record of a shift %s", state)
}

// ShiftStartEntry is the audit entry of scheduled shift sh reaching its
// start, dated at the start whoever notices it.
func ShiftStartEntry(ctx context.Context, sh *Shift) (AuditEntry, error) {
	ctx = WithCaller(ctx, Caller{Actor: ActorClock})
	after := *sh
	after.Status = ShiftActive
	return NewAuditEntry(ctx, sh.Revision, ActionStart, KindShift, sh.ID, nil, &after, sh.StartsAt)
}
