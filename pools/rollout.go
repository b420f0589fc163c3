package pools

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"
)

// KindRollout is the kind of staged rollouts. Like shifts it follows the
// change feed but is not in Kinds: a rollout is an action in progress,
// not configuration a file keeps.
const KindRollout Kind = "rollouts"

// Rollout moves a pool's origin weights from their values at the start
// (From) to new ones (Weights) in steps: step k is in force for one
// StepInterval and sets each weight Steps[k] percent of the way. Or it
// moves a load balancer's default pool order (FromDefaultPools to
// DefaultPools): at step k, Steps[k] percent of the clients, chosen by a
// hash of their subnet, are answered with the new order and the rest with
// the old. Every
// node works out the step from its own clock and the stored fields, so
// the nodes step at the same moment with no write; only events are
// writes (pause, resume, abort, a guard's roll back, completion), each
// conditional on the rollout's revision so that one node's write wins.
type Rollout struct {
	Meta
	// Pool is the pool whose weights change; Weights the new weight of
	// each origin named (origins not named keep theirs).
	Pool    string             `json:"pool,omitempty"`
	Weights map[string]float64 `json:"weights,omitempty"`
	// From is the weight of each origin named, read from the pool when
	// the rollout starts. Read-only.
	From map[string]float64 `json:"from,omitempty"`
	// LoadBalancer is the load balancer whose default pool order changes
	// (instead of Pool), DefaultPools the new order, FromDefaultPools the
	// order read from it when the rollout starts (read-only).
	LoadBalancer     string   `json:"load_balancer,omitempty"`
	DefaultPools     []string `json:"default_pools,omitempty"`
	FromDefaultPools []string `json:"from_default_pools,omitempty"`
	Reason           string   `json:"reason"`
	// Steps are percentages of the way, increasing, the last 100
	// (default 10, 25, 50, 100).
	Steps []float64 `json:"steps"`
	// StepInterval is how long each step holds ("5m", "30s"; default 5m).
	StepInterval string `json:"step_interval"`
	// StartsAt defaults to the time of the create.
	StartsAt time.Time     `json:"starts_at"`
	Guards   RolloutGuards `json:"guards"`
	// State is stored: running, paused, completed, rolled_back, aborted.
	State string `json:"state"`
	// PausedAt is set while paused; Held is the time spent paused before
	// (the steps run that much later).
	PausedAt *time.Time `json:"paused_at"`
	HeldMS   int64      `json:"held_ms"`
	// EndedAt and EndReason: when and why it completed, rolled back or
	// was aborted.
	EndedAt   *time.Time `json:"ended_at"`
	EndReason string     `json:"end_reason,omitempty"`
	// FailedStep is the step (0-based) in force when a guard failed.
	FailedStep *int `json:"failed_step,omitempty"`

	// Derived on read from the clock, never stored.
	Status      string     `json:"status,omitempty"`
	CurrentStep *int       `json:"current_step,omitempty"`
	Percent     *float64   `json:"percent,omitempty"`
	NextStepAt  *time.Time `json:"next_step_at,omitempty"`
}

// RolloutGuards are checked while a rollout runs; the health guards
// (the pool stays serving, no origin that gains weight goes down) always
// are.
type RolloutGuards struct {
	// Webhook, when set, is POSTed the rollout at every step; an answer
	// other than 2xx (or none within 5 s) rolls the rollout back.
	Webhook string `json:"webhook,omitempty"`
	// Query, when set, is a Prometheus instant query asked of Prometheus
	// (a base URL: its /api/v1/query) at every step: the rollout goes on
	// while the result is not empty and every value is above 0; anything
	// else (no answer within 5 s included) rolls it back.
	Query      string `json:"query,omitempty"`
	Prometheus string `json:"prometheus,omitempty"`
}

// Rollout states. Stored: running, paused, and the three ends; derived
// on read: scheduled (before StartsAt).
const (
	RolloutScheduled  = "scheduled"
	RolloutRunning    = "running"
	RolloutPaused     = "paused"
	RolloutCompleted  = "completed"
	RolloutRolledBack = "rolled_back"
	RolloutAborted    = "aborted"
)

// RolloutStates are the values GET /rollouts?status= takes.
var RolloutStates = []string{RolloutScheduled, RolloutRunning, RolloutPaused, RolloutCompleted, RolloutRolledBack, RolloutAborted}

// Rollout actions: what an event does to a rollout.
const (
	RolloutPause    = "pause"
	RolloutResume   = "resume"
	RolloutAbort    = "abort"
	RolloutRollBack = "roll_back" // a guard failed
	RolloutComplete = "complete"  // the last step held its interval
)

// Rollout defaults and bounds.
var DefaultRolloutSteps = []float64{10, 25, 50, 100}

const (
	DefaultRolloutInterval = "5m"
	MinRolloutInterval     = time.Second
	MaxRolloutInterval     = 24 * time.Hour
	MaxRolloutSteps        = 20
)

// ActorGuard records a rollout rolled back by a failed guard.
const ActorGuard = "guard"

func (r *Rollout) Kind() Kind        { return KindRollout }
func (r *Rollout) ObjectMeta() *Meta { return &r.Meta }

func (r *Rollout) UnmarshalJSON(b []byte) error {
	type plain Rollout
	var v plain
	if err := decodeStrict(b, &v); err != nil {
		return err
	}
	*r = Rollout(v)
	return nil
}

// Interval is the parsed StepInterval (0 when it does not parse).
func (r *Rollout) Interval() time.Duration {
	d, err := ParseShiftDuration(r.StepInterval)
	if err != nil {
		return 0
	}
	return d
}

// Ended reports whether the rollout reached one of its ends.
func (r *Rollout) Ended() bool {
	return r.State == RolloutCompleted || r.State == RolloutRolledBack || r.State == RolloutAborted
}

// elapsed is the running time at now: the time since StartsAt, less the
// time spent paused, frozen while paused.
func (r *Rollout) elapsed(now time.Time) time.Duration {
	if r.PausedAt != nil && r.PausedAt.Before(now) {
		now = *r.PausedAt
	}
	return now.Sub(r.StartsAt) - time.Duration(r.HeldMS)*time.Millisecond
}

// Step is the step in force at now (0-based): -1 before the start, and
// len(Steps) once the last step has held its interval (completion due).
// It is the same on every node: it depends on the stored fields and the
// clock alone.
func (r *Rollout) Step(now time.Time) int {
	iv := r.Interval()
	e := r.elapsed(now)
	if e < 0 || iv <= 0 {
		return -1
	}
	return min(int(e/iv), len(r.Steps))
}

// Status is the rollout's state at now: its stored state, scheduled
// before its start.
func (r *Rollout) StatusAt(now time.Time) string {
	if r.State == RolloutRunning && now.Before(r.StartsAt) {
		return RolloutScheduled
	}
	return r.State
}

// InForce reports whether the rollout sets the pool's weights at now:
// running or paused, started, not ended.
func (r *Rollout) InForce(now time.Time) bool {
	return (r.State == RolloutRunning || r.State == RolloutPaused) && r.Step(now) >= 0
}

// Percent is how far along the weights are at now (0 to 100).
func (r *Rollout) PercentAt(now time.Time) float64 {
	k := r.Step(now)
	switch {
	case k < 0:
		return 0
	case k >= len(r.Steps):
		return 100
	}
	return r.Steps[k]
}

// WeightAt is origin name's weight at percent pct, and whether the
// rollout names it.
func (r *Rollout) WeightAt(name string, pct float64) (float64, bool) {
	to, ok := r.Weights[name]
	if !ok {
		return 0, false
	}
	from := r.From[name]
	// Rounded to a millionth: every node computes the same weights.
	return math.Round((from+(to-from)*pct/100)*1e6) / 1e6, true
}

// Apply returns p with the weights in force at percent pct: a copy when
// any changes, p itself otherwise.
func (r *Rollout) Apply(p *Pool, pct float64) *Pool {
	var out *Pool
	for i, o := range p.Origins {
		w, ok := r.WeightAt(o.Name, pct)
		if !ok || w == o.Weight {
			continue
		}
		if out == nil {
			c := *p
			c.Origins = slices.Clone(p.Origins)
			out = &c
		}
		out.Origins[i].Weight = w
	}
	if out == nil {
		return p
	}
	return out
}

// Target is what the rollout changes: the pool's kind and id, or the
// load balancer's.
func (r *Rollout) Target() (Kind, string) {
	if r.LoadBalancer != "" {
		return KindLoadBalancer, r.LoadBalancer
	}
	return KindPool, r.Pool
}

// Moves reports whether the rollout, unended, changes the object of kind
// k and id.
func (r *Rollout) Moves(k Kind, id string) bool {
	tk, tid := r.Target()
	return !r.Ended() && tk == k && tid == id
}

// GainingPools are the pools the new order moves traffic to: each one
// placed earlier than in the old order, or not in it.
func (r *Rollout) GainingPools() []string {
	var out []string
	for i, id := range r.DefaultPools {
		if j := slices.Index(r.FromDefaultPools, id); j < 0 || i < j {
			out = append(out, id)
		}
	}
	return out
}

// Gaining are the origins whose weight the rollout raises.
func (r *Rollout) Gaining() []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(r.Weights)) {
		if r.Weights[name] > r.From[name] {
			out = append(out, name)
		}
	}
	return out
}

// NextBoundary is the next moment after now when the rollout's step
// changes (or completion falls due); zero when none.
func (r *Rollout) NextBoundary(now time.Time) time.Time {
	if r.State != RolloutRunning {
		return time.Time{}
	}
	iv := r.Interval()
	if iv <= 0 {
		return time.Time{}
	}
	k := r.Step(now)
	if k >= len(r.Steps) {
		return time.Time{}
	}
	return r.StartsAt.Add(time.Duration(r.HeldMS)*time.Millisecond + time.Duration(k+1)*iv)
}

// WithStatus returns a copy with the derived fields filled at now.
func (r *Rollout) WithStatus(now time.Time) *Rollout {
	c := *r
	c.Status = r.StatusAt(now)
	c.CurrentStep, c.Percent, c.NextStepAt = nil, nil, nil
	if r.State == RolloutRunning || r.State == RolloutPaused {
		k, pct := r.Step(now), r.PercentAt(now)
		c.CurrentStep, c.Percent = &k, &pct
		if next := r.NextBoundary(now); !next.IsZero() {
			c.NextStepAt = &next
		}
	}
	return &c
}

// NextRolloutBoundary is the earliest step change after now among
// rollouts; zero when none.
func NextRolloutBoundary(list []Rollout, now time.Time) time.Time {
	var next time.Time
	for i := range list {
		if t := list[i].NextBoundary(now); !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	return next
}

// Prepare fills a new rollout's defaults from now and checks it on its
// own, naming every field at fault.
func (r *Rollout) Prepare(now time.Time) error {
	var e errs
	r.StartsAt = startTime(r.StartsAt, now)
	if r.Steps == nil {
		r.Steps = slices.Clone(DefaultRolloutSteps)
	}
	if r.StepInterval == "" {
		r.StepInterval = DefaultRolloutInterval
	}
	for _, f := range []struct {
		set  bool
		name string
	}{{r.From != nil, "from"}, {r.FromDefaultPools != nil, "from_default_pools"}, {r.State != "", "state"}, {r.PausedAt != nil, "paused_at"}, {r.HeldMS != 0, "held_ms"},
		{r.EndedAt != nil, "ended_at"}, {r.EndReason != "", "end_reason"}, {r.FailedStep != nil, "failed_step"}} {
		if f.set {
			e.add(f.name, "is read-only: the rollout sets it")
		}
	}
	r.State = RolloutRunning
	r.Status, r.CurrentStep, r.Percent, r.NextStepAt = "", nil, nil, nil
	if err := r.Validate(nil); err != nil {
		e.list = append(e.list, err.(*ValidationError).Errors...)
	}
	return e.err()
}

// Validate checks a rollout on its own (refs unused: the pool is checked
// against the store in the write's transaction).
func (r *Rollout) Validate(refs References) error {
	var e errs
	switch {
	case r.Pool == "" && r.LoadBalancer == "":
		e.add("pool", "give the pool whose weights change, or load_balancer: the load balancer whose pool order changes")
	case r.Pool != "" && r.LoadBalancer != "":
		e.add("load_balancer", "a rollout changes one pool's weights or one load balancer's pool order: give pool or load_balancer, not both")
	case r.Pool != "":
		if len(r.Weights) == 0 {
			e.add("weights", "give the new weight of at least one origin, by name")
		}
		if r.DefaultPools != nil {
			e.add("default_pools", "a pool's rollout changes weights: default_pools goes with load_balancer")
		}
	default:
		if r.Weights != nil {
			e.add("weights", "a load balancer's rollout changes its pool order: weights go with pool")
		}
		switch {
		case len(r.DefaultPools) == 0:
			e.add("default_pools", "give the new order of the load balancer's default pools")
		case len(r.DefaultPools) > MaxPoolsPerList:
			e.add("default_pools", "at most %d pools", MaxPoolsPerList)
		}
		for i, id := range r.DefaultPools {
			if slices.Index(r.DefaultPools, id) < i {
				e.add(fmt.Sprintf("default_pools[%d]", i), "pool %q is listed twice", id)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Weights)) {
		if w := r.Weights[name]; w < 0 || w > 1 || math.IsNaN(w) {
			e.add("weights."+name, "%v: a weight is from 0 to 1", w)
		}
	}
	switch {
	case len(r.Steps) == 0:
		e.add("steps", "at least one step; the last is 100")
	case len(r.Steps) > MaxRolloutSteps:
		e.add("steps", "at most %d steps", MaxRolloutSteps)
	default:
		for i, s := range r.Steps {
			if s <= 0 || s > 100 || (i > 0 && s <= r.Steps[i-1]) {
				e.add(fmt.Sprintf("steps[%d]", i), "%v: steps are percentages above 0, increasing, at most 100", s)
			}
		}
		if r.Steps[len(r.Steps)-1] != 100 {
			e.add(fmt.Sprintf("steps[%d]", len(r.Steps)-1), "the last step is 100 (the new values)")
		}
	}
	if d, err := ParseShiftDuration(r.StepInterval); err != nil {
		e.add("step_interval", "%s", err.Error())
	} else if d < MinRolloutInterval || d > MaxRolloutInterval {
		e.add("step_interval", "%q: from 1s to 24h", r.StepInterval)
	}
	if strings.TrimSpace(r.Reason) == "" {
		e.add("reason", "a reason is required: the audit log and the console show it")
	} else if len(r.Reason) > 1000 {
		e.add("reason", "longer than 1000 characters")
	}
	for _, g := range []struct{ field, url string }{{"guards.webhook", r.Guards.Webhook}, {"guards.prometheus", r.Guards.Prometheus}} {
		if g.url == "" {
			continue
		}
		if u, err := url.Parse(g.url); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			e.add(g.field, "%q: want an http:// or https:// URL", g.url)
		}
	}
	switch q := r.Guards; {
	case q.Query != "" && q.Prometheus == "":
		e.add("guards.prometheus", "the Prometheus server the query is asked of is required with guards.query (a base URL: http://prometheus:9090)")
	case q.Query == "" && q.Prometheus != "":
		e.add("guards.query", "the instant query is required with guards.prometheus")
	case len(q.Query) > 4000:
		e.add("guards.query", "longer than 4000 characters")
	}
	return e.err()
}

// StateError refuses an action the object's state does not allow (a
// second rollout on a pool, resuming a rollout that runs); the API
// answers it with 409.
type StateError struct{ Message string }

func (e *StateError) Error() string { return e.Message }

// RolloutStore starts rollouts and records their events. Reads go
// through Get and List with KindRollout.
type RolloutStore interface {
	// StartRollout stores a new rollout (prepared by the caller) after
	// reading the pool's current weights into From (or the load
	// balancer's order into FromDefaultPools), unless guard (called in
	// the transaction with the pool or load balancer as it will end)
	// refuses it. A pool or load balancer has at most one unended rollout
	// (*StateError).
	StartRollout(ctx context.Context, r *Rollout, guard func(final Object) error) (*Rollout, error)
	// ChangeRollout applies action (RolloutPause, ...) to rollout id,
	// whose revision must be ifRevision when > 0 (ErrStale): two nodes
	// that see the same guard fail write once. Completion writes the new
	// weights into the pool (the order into the load balancer) in the
	// same transaction and audits that write too (ChangeRolloutAudited).
	ChangeRollout(ctx context.Context, id string, ifRevision int64, action, reason string) (*Rollout, error)
	// RecordRolloutStep audits that rollout r reached step k by the
	// clock, once however many nodes report it.
	RecordRolloutStep(ctx context.Context, r *Rollout, k int) error
}

// StartRolloutIn stores r inside tx: From from the pool, one unended
// rollout per pool, the final pool valid and accepted by guard.
func StartRolloutIn(tx Tx, r *Rollout, guard func(Object) error, list func() ([]Rollout, error), now time.Time) (*Rollout, int64, error) {
	return createChecked(tx, r, func() error { return r.readFrom(tx, guard, list) }, now)
}

// readFrom fills From from the stored pool and checks what the start
// needs: the pool and the origins named exist, no other rollout of the
// pool is under way, the weights change, and the pool with the new
// weights is valid and accepted by guard.
func (r *Rollout) readFrom(tx Tx, guard func(Object) error, list func() ([]Rollout, error)) error {
	if r.LoadBalancer != "" {
		return r.readOrder(tx, guard, list)
	}
	o, err := readMoved(tx, KindPool, r.Pool, list)
	if err != nil {
		return err
	}
	p := o.(*Pool)
	var e errs
	r.From = map[string]float64{}
	changes := false
	for _, name := range slices.Sorted(maps.Keys(r.Weights)) {
		i := slices.IndexFunc(p.Origins, func(o Origin) bool { return o.Name == name })
		if i < 0 {
			e.add("weights."+name, "pool %s has no origin named %q", r.Pool, name)
			continue
		}
		r.From[name] = p.Origins[i].Weight
		changes = changes || p.Origins[i].Weight != r.Weights[name]
	}
	if e.err() == nil && !changes {
		e.add("weights", "every weight named is already the pool's: nothing to roll out")
	}
	if err := e.err(); err != nil {
		return err
	}
	final := r.Apply(p, 100)
	if err := final.Validate(nil); err != nil {
		return fmt.Errorf("the pool with the new weights: %w", err)
	}
	if guard != nil {
		return guard(final)
	}
	return nil
}

// readMoved reads the object a starting rollout would move, kind id
// (a pool, or a load balancer's order), and refuses a second rollout of
// it: two rollouts of one object would each complete to their own values.
func readMoved(tx Tx, kind Kind, id string, list func() ([]Rollout, error)) (Object, error) {
	field := kind.Singular()
	noun := strings.ReplaceAll(field, "_", " ")
	o, err := tx.Get(kind, id)
	if errors.Is(err, ErrNotFound) {
		var e errs
		e.add(field, "no %s with id %q", noun, id)
		return nil, e.err()
	} else if err != nil {
		return nil, err
	}
	stored, err := list()
	if err != nil {
		return nil, err
	}
	for _, x := range stored {
		if x.Moves(kind, id) {
			return nil, &StateError{Message: fmt.Sprintf("%s %s already has rollout %s %s: abort it or let it end first", noun, id, x.ID, x.State)}
		}
	}
	return o, nil
}

// readOrder is readFrom for a load balancer's pool order: the load
// balancer and the pools named exist, no other rollout of it is under
// way, the order changes, and the load balancer with the new order is
// valid and accepted by guard.
func (r *Rollout) readOrder(tx Tx, guard func(Object) error, list func() ([]Rollout, error)) error {
	o, err := readMoved(tx, KindLoadBalancer, r.LoadBalancer, list)
	if err != nil {
		return err
	}
	lb := o.(*LoadBalancer)
	var e errs
	r.FromDefaultPools = slices.Clone(lb.DefaultPools)
	if slices.Equal(r.FromDefaultPools, r.DefaultPools) {
		e.add("default_pools", "the load balancer already has this order: nothing to roll out")
		return e.err()
	}
	final := r.ApplyOrder(lb)
	var fe errs
	if err := check(tx, final, &fe); err != nil {
		return err
	}
	if err := fe.err(); err != nil {
		return fmt.Errorf("the load balancer with the new order: %w", err)
	}
	if guard != nil {
		return guard(final)
	}
	return nil
}

// RefuseMoving refuses a direct write of o (a PUT or PATCH) while a
// rollout that has not ended moves it: the rollout read the values it
// starts from when it began and would write its own at completion, so a
// write between would be silently overridden or undone. The operator
// aborts the rollout (or lets it end) and writes then; shifts, which do
// not write the pool, stay the way to act at once.
func RefuseMoving(o Object, list func() ([]Rollout, error)) error {
	k, id := o.Kind(), o.ObjectMeta().ID
	if k != KindPool && k != KindLoadBalancer {
		return nil
	}
	stored, err := list()
	if err != nil {
		return err
	}
	for _, r := range stored {
		if r.Moves(k, id) {
			return &StateError{Message: fmt.Sprintf("%s %s is being changed by rollout %s (%s): abort it (POST /api/v1/rollouts/%s/abort) or let it end, then write",
				k.Singular(), id, r.ID, r.State, r.ID)}
		}
	}
	return nil
}

// ApplyOrder returns a copy of lb with the new default pool order.
func (r *Rollout) ApplyOrder(lb *LoadBalancer) *LoadBalancer {
	c := *lb
	c.DefaultPools = slices.Clone(r.DefaultPools)
	return &c
}

// ChangeRolloutIn applies action to rollout id inside tx; see
// RolloutStore.ChangeRollout.
func ChangeRolloutIn(tx Tx, id string, ifRevision int64, action, reason string, now time.Time) (*Rollout, int64, error) {
	// Bumped first, so that writers serialise before the read: of two
	// nodes writing at one revision, the second finds it moved.
	if _, err := tx.BumpRevision(); err != nil {
		return nil, 0, err
	}
	o, err := fetch(tx, KindRollout, id, ifRevision)
	if err != nil {
		return nil, 0, err
	}
	r := o.(*Rollout)
	now = StoreTime(now)
	refuse := func(why string) (*Rollout, int64, error) {
		return nil, 0, &StateError{Message: fmt.Sprintf("rollout %s is %s: cannot %s it%s", id, r.StatusAt(now), strings.ReplaceAll(action, "_", " "), why)}
	}
	if r.Ended() {
		return refuse("")
	}
	end := func(state string) {
		r.State, r.EndedAt, r.EndReason = state, &now, reason
		if r.PausedAt != nil {
			r.HeldMS += now.Sub(*r.PausedAt).Milliseconds()
			r.PausedAt = nil
		}
	}
	switch action {
	case RolloutPause:
		if r.State == RolloutPaused {
			return refuse(" (already paused)")
		}
		r.State, r.PausedAt = RolloutPaused, &now
	case RolloutResume:
		if r.State != RolloutPaused {
			return refuse(" (not paused)")
		}
		r.HeldMS += now.Sub(*r.PausedAt).Milliseconds()
		r.State, r.PausedAt = RolloutRunning, nil
	case RolloutAbort:
		end(RolloutAborted)
	case RolloutRollBack:
		k := r.Step(now)
		r.FailedStep = &k
		end(RolloutRolledBack)
	case RolloutComplete:
		if r.State != RolloutRunning || r.Step(now) < len(r.Steps) {
			return refuse(" (its last step has not held its interval)")
		}
		k, id := r.Target()
		o, err := tx.Get(k, id)
		if err != nil {
			return nil, 0, err
		}
		what := "the new weights"
		if lb, ok := o.(*LoadBalancer); ok {
			o, what = r.ApplyOrder(lb), "the new order"
		} else {
			o = r.Apply(o.(*Pool), 100)
		}
		if _, _, err := ReplaceIn(tx, o, 0, now); err != nil {
			return nil, 0, fmt.Errorf("writing %s into %s %s: %w", what, k.Singular(), id, err)
		}
		end(RolloutCompleted)
	default:
		return nil, 0, fmt.Errorf("unknown rollout action %q", action)
	}
	out, rev, err := ReplaceIn(tx, r, 0, now)
	if err != nil {
		return nil, 0, err
	}
	return out.(*Rollout), rev, nil
}

// ChangeRolloutAudited is ChangeRolloutIn under one global revision,
// with the audit entries the store appends: the rollout's and, when the
// action completes it, that of the pool (or load balancer) the completion
// wrote. That write is a write of the pool like any other: audited, sent
// as a config event, and a new version of every load balancer using the
// pool (docs/api.md).
func ChangeRolloutAudited(ctx context.Context, rec *Recorder, id string, ifRevision int64, action, reason string, now time.Time) (*Rollout, []AuditEntry, int64, error) {
	tx := &oneRevision{Tx: rec}
	r, rev, err := ChangeRolloutIn(tx, id, ifRevision, action, reason, now)
	if err != nil {
		return nil, nil, 0, err
	}
	var entries []AuditEntry
	if r.State == RolloutCompleted {
		k, target := r.Target()
		e, err := rec.Entry(ctx, rev, k, target, now)
		if err != nil {
			return nil, nil, 0, err
		}
		entries = append(entries, e)
	}
	e, err := rec.Entry(ctx, rev, KindRollout, id, now)
	if err != nil {
		return nil, nil, 0, err
	}
	return r, append(entries, e), rev, nil
}

// RolloutStepEntry is the audit entry of r reaching step k by the clock,
// dated at the step's start whoever notices it.
func RolloutStepEntry(ctx context.Context, r *Rollout, k int) (AuditEntry, error) {
	ctx = WithCaller(ctx, Caller{Actor: ActorClock})
	iv := r.Interval()
	at := r.StartsAt.Add(time.Duration(r.HeldMS)*time.Millisecond + time.Duration(k)*iv)
	after := r.WithStatus(at)
	after.CurrentStep = &k
	return NewAuditEntry(ctx, r.Revision, ActionUpdate, KindRollout, r.ID, nil, after, at)
}
