package pools

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// WriteEvent is the event of an audited write: a shift started, scheduled
// or ended, or a configuration change. nil for a write that is neither
// (tokens, keys). tx finds the load balancers a pool serves, for the
// subscriptions' filters.
func WriteEvent(tx Tx, e *AuditEntry) (*Event, error) {
	raw := e.After
	if e.Action == ActionDelete {
		raw = e.Before
	}
	o := New(e.Kind)
	if o == nil {
		return nil, nil
	}
	if z, ok := o.(*Zone); ok {
		// Only the name is needed: a zone of 10,000 records takes tens
		// of milliseconds to decode in full, on every UPDATE of it.
		var named struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(raw, &named); err != nil {
			return nil, fmt.Errorf("event of %s %s: %w", e.Kind.Singular(), e.ObjectID, err)
		}
		z.Name = named.Name
	} else if err := json.Unmarshal(raw, o); err != nil {
		return nil, fmt.Errorf("event of %s %s: %w", e.Kind.Singular(), e.ObjectID, err)
	}
	d := EventData{Kind: string(e.Kind), Object: e.ObjectID, Actor: e.Actor}
	switch v := o.(type) {
	case *Shift:
		return shiftEvent(v, e), nil
	case *Rollout:
		return rolloutEvent(tx, v, e)
	}
	name := ""
	switch v := o.(type) {
	case *Zone:
		name = v.Name
	case *Pool:
		name = v.Name
		d.Pool, d.PoolName, d.Pools = v.ID, v.Name, []string{v.ID}
		refs, err := tx.Referrers(KindPool, v.ID)
		if err != nil {
			return nil, err
		}
		for _, r := range refs {
			d.LoadBalancers = append(d.LoadBalancers, r.ID)
		}
	case *LoadBalancer:
		name = v.Name
		d.LoadBalancer, d.LoadBalancerName, d.LoadBalancers = v.ID, v.Name, []string{v.ID}
	case *Network:
		name = v.CIDR
	}
	d.New = e.Action
	d.Summary = fmt.Sprintf("%s %s %s by %s", e.Kind.Singular(), cmpOr(name, e.ObjectID), pastTense(e.Action), e.Actor)
	return &Event{
		ID:   EventID(EventConfig, string(e.Kind), e.ObjectID, strconv.FormatInt(e.Revision, 10)),
		Type: EventConfig, Time: e.Time, Data: d,
	}, nil
}

func pastTense(action string) string {
	switch action {
	case ActionCreate:
		return "created"
	case ActionDelete:
		return "deleted"
	}
	return "updated"
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Shift event states (Data.New).
const (
	ShiftEventStarted   = "started"
	ShiftEventScheduled = "scheduled"
	ShiftEventEnded     = "ended"
	ShiftEventExpired   = "expired"
)

// ShiftEvent is the event of shift sh reaching state (ShiftEvent*) at
// at. Its id depends on the shift and the state alone, so that the nodes
// that notice a start or an expiry by their clocks record it once.
func ShiftEvent(sh *Shift, state string, at time.Time, actor string) Event {
	d := EventData{Kind: string(KindShift), Object: sh.ID, Actor: actor, New: state, Reason: sh.Reason,
		LoadBalancers: sh.LoadBalancers}
	switch {
	case sh.Target.Pool != "":
		d.Pool, d.Pools = sh.Target.Pool, []string{sh.Target.Pool}
	case sh.Target.Origin != "":
		p, o, _ := sh.Target.OriginParts()
		d.Pool, d.Origin, d.Pools = p, o, []string{p}
	}
	d.Summary = fmt.Sprintf("shift of %s %s: %s", sh.Target.String(), state, sh.Reason)
	return Event{ID: EventID(EventShift, sh.ID, state), Type: EventShift, Time: StoreTime(at), Data: d}
}

func shiftEvent(sh *Shift, e *AuditEntry) *Event {
	state := ShiftEventStarted
	switch {
	case e.Action == ActionEnd:
		state = ShiftEventEnded
	case e.Action != ActionCreate:
		return nil // a shift changes only by starting and ending
	case sh.StartsAt.After(e.Time):
		state = ShiftEventScheduled
	}
	ev := ShiftEvent(sh, state, e.Time, e.Actor)
	return &ev
}

// dnssecEvent is the event of a zone's keys changing (a rollover step):
// old and new list each key as "role tag state". Its id is the zone's and
// the new key set's, so the same step is one event.
func dnssecEvent(zoneID string, before, after []ZoneKey, at time.Time) Event {
	desc := func(keys []ZoneKey) string {
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s %d %s", k.Role, k.Tag, k.State)
		}
		return strings.Join(parts, ", ")
	}
	d := EventData{Kind: string(KindZone), Object: zoneID, Old: desc(before), New: desc(after)}
	d.Summary = fmt.Sprintf("DNSSEC keys of zone %s: %s", zoneID, cmpOr(d.New, "none"))
	return Event{ID: EventID(EventDNSSEC, zoneID, d.New, StoreTime(at).Format(time.RFC3339Nano)), Type: EventDNSSEC, Time: StoreTime(at), Data: d}
}

// rolloutEvent is the event of a rollout's write: started, or the state
// it moved to (paused, running again, rolled_back, aborted, completed).
func rolloutEvent(tx Tx, r *Rollout, e *AuditEntry) (*Event, error) {
	state := r.State
	if e.Action == ActionCreate {
		state = "started"
	}
	d := EventData{Kind: string(KindRollout), Object: r.ID, Actor: e.Actor, New: state, Reason: cmpOr(r.EndReason, r.Reason),
		Pool: r.Pool, Pools: []string{r.Pool}}
	refs, err := tx.Referrers(KindPool, r.Pool)
	if err != nil {
		return nil, err
	}
	for _, ref := range refs {
		d.LoadBalancers = append(d.LoadBalancers, ref.ID)
	}
	d.Summary = fmt.Sprintf("rollout %s of pool %s: %s (%s)", r.ID, r.Pool, strings.ReplaceAll(state, "_", " "), d.Reason)
	return &Event{
		ID:   EventID(EventRollout, r.ID, strconv.FormatInt(e.Revision, 10)),
		Type: EventRollout, Time: e.Time, Data: d,
	}, nil
}
