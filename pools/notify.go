package pools

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// KindNotification is the kind of notification subscriptions in the audit
// log; its object id is the subscription's id.
const KindNotification Kind = "notifications"

// Event types a subscription may ask for.
const (
	EventOriginHealth = "origin_health" // an origin's agreed health changed
	EventPoolHealth   = "pool_health"   // a pool went down or came back
	EventFailover     = "failover"      // a load balancer's answering pool changed
	EventShift        = "shift"         // a shift started, ended or expired
	EventConfig       = "config"        // the configuration changed
	EventDNSSEC       = "dnssec"        // a DNSSEC rollover step
	EventNode         = "node"          // a node turned stale, gone or drained, or serves again
	EventRollout      = "rollout"       // a rollout started, paused, resumed, rolled back, was aborted or completed
	// EventTest is the type of the event the test call sends; nobody
	// subscribes to it.
	EventTest = "test"
)

// EventTypes lists what a subscription may ask for.
var EventTypes = []string{EventOriginHealth, EventPoolHealth, EventFailover, EventShift, EventConfig, EventDNSSEC, EventNode, EventRollout}

// Notification formats: how an event is written for the receiver.
const (
	// FormatStandard is the event as JSON, signed the Standard Webhooks
	// way (webhook-id, webhook-timestamp, webhook-signature).
	FormatStandard = "standard"
	// FormatSlack is a Slack incoming-webhook message.
	FormatSlack = "slack"
	// FormatPagerDuty is a PagerDuty Events API v2 event: trigger on down,
	// resolve on up, with the same dedup key.
	FormatPagerDuty = "pagerduty"
)

// Formats lists the formats.
var Formats = []string{FormatStandard, FormatSlack, FormatPagerDuty}

// pagerEvents are the event types that open and close an incident: the
// only ones a PagerDuty subscription may ask for, since a configuration
// change or a shift has nothing to resolve.
var pagerEvents = []string{EventOriginHealth, EventPoolHealth, EventFailover, EventNode}

// Subscription sends events to a URL. The secret (the signing secret of a
// standard subscription, the routing key of a PagerDuty one) is kept by
// the store for signing and is never shown but on creation.
type Subscription struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	URL           string    `json:"url"`
	Events        []string  `json:"events"`
	Format        string    `json:"format"`
	LoadBalancers []string  `json:"load_balancers"`
	Pools         []string  `json:"pools"`
	CreatedOn     time.Time `json:"created_on"`
	ModifiedOn    time.Time `json:"modified_on"`
	// Secret: "whsec_" and base64 for standard, the routing key for
	// pagerduty, empty for slack (the URL is its secret).
	Secret string `json:"-"`
}

// Validate checks a subscription on its own, listing every fault. The
// API checks, in addition, that the URL is not the API itself.
func (s *Subscription) Validate() error {
	var e errs
	switch {
	case strings.TrimSpace(s.Name) == "":
		e.add("name", "required")
	case len(s.Name) > 100:
		e.add("name", "longer than 100 characters")
	}
	if msg := checkWebhookURL(s.URL); msg != "" {
		e.add("url", "%s", msg)
	}
	if !slices.Contains(Formats, s.Format) {
		e.add("format", "%q is not one of %s", s.Format, strings.Join(Formats, ", "))
	}
	if len(s.Events) == 0 {
		e.add("events", "at least one of %s", strings.Join(EventTypes, ", "))
	}
	seen := map[string]bool{}
	for i, ev := range s.Events {
		p := fmt.Sprintf("events[%d]", i)
		switch {
		case !slices.Contains(EventTypes, ev):
			e.add(p, "%q is not one of %s", ev, strings.Join(EventTypes, ", "))
		case seen[ev]:
			e.add(p, "%q is listed twice", ev)
		case s.Format == FormatPagerDuty && !slices.Contains(pagerEvents, ev):
			e.add(p, "%q has nothing to resolve: a pagerduty subscription takes %s", ev, strings.Join(pagerEvents, ", "))
		}
		seen[ev] = true
	}
	for name, list := range map[string][]string{"load_balancers": s.LoadBalancers, "pools": s.Pools} {
		for i, id := range list {
			if id == "" {
				e.add(fmt.Sprintf("%s[%d]", name, i), "must not be empty")
			}
		}
	}
	if s.Format == FormatPagerDuty && strings.TrimSpace(s.Secret) == "" {
		e.add("routing_key", "required: the integration key of the PagerDuty service")
	}
	return e.err()
}

// checkWebhookURL says what is wrong with a receiver's URL ("" if nothing).
func checkWebhookURL(raw string) string {
	if raw == "" {
		return "required"
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Sprintf("not a URL: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Sprintf("scheme %q: want an http or https URL", u.Scheme)
	}
	if u.Host == "" || u.Hostname() == "" {
		return "no host"
	}
	if u.User != nil {
		return "must not carry credentials (user:password@): the URL is shown to every reader"
	}
	return ""
}

// Prepare readies a new subscription for storing at now.
func (s *Subscription) Prepare(now time.Time) error {
	if s.ID == "" {
		s.ID = NewID()
	}
	s.CreatedOn, s.ModifiedOn = StoreTime(now), StoreTime(now)
	if s.Events == nil {
		s.Events = []string{}
	}
	if s.LoadBalancers == nil {
		s.LoadBalancers = []string{}
	}
	if s.Pools == nil {
		s.Pools = []string{}
	}
	return s.Validate()
}

// Replacing readies s to replace old: same id, format and creation, the
// old secret unless a new routing key is given, valid.
func (s *Subscription) Replacing(old *Subscription, now time.Time) error {
	if s.Format != old.Format {
		return &ValidationError{Errors: []FieldError{{Path: "format",
			Message: fmt.Sprintf("is %s and cannot change: create another subscription", old.Format)}}}
	}
	if s.Secret == "" || s.Format != FormatPagerDuty {
		s.Secret = old.Secret
	}
	s.ID = old.ID
	if err := s.Prepare(now); err != nil {
		return err
	}
	s.CreatedOn = old.CreatedOn
	return nil
}

// NewWebhookSecret returns a fresh signing secret as Standard Webhooks
// writes it: "whsec_" and the base64 of 24 random bytes.
func NewWebhookSecret() string {
	var b [24]byte
	_, _ = rand.Read(b[:]) // never fails: crypto/rand panics instead
	return "whsec_" + base64.StdEncoding.EncodeToString(b[:])
}

// Wants reports whether the subscription takes event e: its type is
// asked for, and the filters (load balancers, pools) name one the event
// concerns. An event that names no load balancer (no pool) passes that
// filter: a filter narrows the events about load balancers (pools), it
// does not hide the others.
func (s *Subscription) Wants(e *Event) bool {
	if !slices.Contains(s.Events, e.Type) {
		return false
	}
	if len(s.LoadBalancers) > 0 && len(e.Data.LoadBalancers) > 0 && !overlaps(s.LoadBalancers, e.Data.LoadBalancers) {
		return false
	}
	if len(s.Pools) > 0 && len(e.Data.Pools) > 0 && !overlaps(s.Pools, e.Data.Pools) {
		return false
	}
	return true
}

func overlaps(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// Event is one thing that happened, as a standard subscription receives
// it. Its ID is stable: every node that sees the same transition derives
// the same one, and a receiver drops what it has already seen.
type Event struct {
	ID   string    `json:"id"`
	Type string    `json:"type"`
	Time time.Time `json:"time"`
	Data EventData `json:"data"`
}

// EventData says what the event concerns, what changed and why.
type EventData struct {
	// Summary is one line for a human (Slack, PagerDuty).
	Summary          string `json:"summary"`
	LoadBalancer     string `json:"load_balancer,omitempty"`
	LoadBalancerName string `json:"load_balancer_name,omitempty"`
	Pool             string `json:"pool,omitempty"`
	PoolName         string `json:"pool_name,omitempty"`
	Origin           string `json:"origin,omitempty"`
	// Old and New are the states: "up"/"down" for health, pool ids for a
	// failover, shift states for shifts, audit actions for config.
	Old    string `json:"old,omitempty"`
	New    string `json:"new,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Kind and Object name the configuration object of a config or shift
	// event; Actor who changed it.
	Kind   string `json:"kind,omitempty"`
	Object string `json:"object,omitempty"`
	Actor  string `json:"actor,omitempty"`
	Node   string `json:"node,omitempty"`
	// LoadBalancers and Pools are every one the event concerns: what the
	// subscriptions' filters match.
	LoadBalancers []string `json:"load_balancers,omitempty"`
	Pools         []string `json:"pools,omitempty"`
}

// Event states of health events.
const (
	StateUp   = "up"
	StateDown = "down"
)

// EventID derives an event's id from what identifies the happening, so
// that every node that records it names it alike.
func EventID(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return "evt_" + hex.EncodeToString(h[:16])
}

// Down reports whether the event opens an incident (PagerDuty trigger):
// something went down, or a load balancer left its first pool.
func (e *Event) Down() bool {
	if e.Type == EventFailover {
		return e.Data.Reason != ReasonPrimaryBack
	}
	return e.Data.New == StateDown || e.Type == EventNode && (e.Data.New == NodeStale || e.Data.New == NodeGone)
}

// ReasonPrimaryBack is the reason of a failover back to the first pool.
const ReasonPrimaryBack = "the first pool serves again"

// StateChange is a transition a node observed, keyed by what changed
// ("pool/<id>", "lb/<id>", ...). The store records Event when State
// differs from the state last recorded under Key, and then records State:
// many nodes reporting the same transition record it once. A key never
// recorded counts as Assume; an empty Assume records the first state
// without an event.
type StateChange struct {
	Key    string
	State  string
	Assume string
	Event  Event
}

// RecordStatesIn is a store's RecordStates, run inside its transaction
// over its own reads and writes: recorded reads the state recorded under
// a key (known false: none yet), record records one, add records an event
// once (false: it was already). The events recorded are returned in the
// order of the changes.
func RecordStatesIn(changes []StateChange, recorded func(key string) (state string, at time.Time, known bool, err error),
	record func(key, state string, at time.Time) error, add func(*Event) (bool, error)) ([]Event, error) {
	var out []Event
	for _, c := range changes {
		was, at, known, err := recorded(c.Key)
		if err != nil {
			return nil, err
		}
		changed, e := c.against(was, at, known)
		if !changed {
			continue
		}
		if err := record(c.Key, c.State, c.Event.Time); err != nil {
			return nil, err
		}
		if e == nil {
			continue
		}
		added, err := add(e)
		if err != nil {
			return nil, err
		}
		if added {
			out = append(out, *e)
		}
	}
	return out, nil
}

// against judges c against the state recorded under its key at at (known
// false: none yet): whether c's State is to be recorded, and the event to
// record with it (nil when the key had no state, so nothing changed).
func (c StateChange) against(was string, at time.Time, known bool) (record bool, e *Event) {
	if !known {
		was = c.Assume
	}
	// A state observed before the recorded one is a node behind the
	// others: what it reports has already changed since.
	if was == c.State || known && c.Event.Time.Before(at) {
		return false, nil
	}
	if was == "" {
		return true, nil
	}
	ev := c.Event
	if ev.Data.Old == "" {
		ev.Data.Old = was
	}
	return true, &ev
}

// Delivery statuses.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed" // given up after the retry window
)

// Delivery is one event on its way to one subscription.
type Delivery struct {
	Subscription string `json:"subscription"`
	// Seq orders the events: a subscription gets them in Seq order.
	Seq         int64      `json:"seq"`
	Event       Event      `json:"event"`
	Status      string     `json:"status"`
	Attempts    int        `json:"attempts"`
	NextAttempt *time.Time `json:"next_attempt_at"`
	LastAttempt *time.Time `json:"last_attempt_at"`
	// LastStatus is the HTTP status of the last attempt (0: none, or no
	// answer).
	LastStatus  int        `json:"last_status_code"`
	LastError   string     `json:"last_error"`
	DeliveredAt *time.Time `json:"delivered_at"`
}

// Claim is a delivery a node has leased: the event, the subscription with
// its secret, and the delivery's attempts so far.
type Claim struct {
	Subscription Subscription
	Seq          int64
	Event        Event
	Attempts     int
}

// Attempt is the outcome of one delivery attempt.
type Attempt struct {
	At     time.Time
	Status int    // HTTP status; 0 when none came
	Error  string // "" when delivered
	// Next is when to try again; zero with Error set gives up.
	Next time.Time
}

// DeliveryList is one page of a subscription's deliveries, newest first.
type DeliveryList struct {
	Items      []Delivery
	TotalCount int
}

// Backlog is what waits for delivery across all subscriptions.
type Backlog struct {
	Pending int
	// Oldest is the time of the oldest pending event (zero: none).
	Oldest time.Time
}

// NotifyStore keeps subscriptions and the outbox of events to deliver.
// Subscription writes are audited without the secret.
type NotifyStore interface {
	// CreateSubscription stores s (Prepare'd here, with its Secret).
	CreateSubscription(ctx context.Context, s Subscription) (Subscription, error)
	// Subscriptions lists every subscription by creation, without secrets.
	Subscriptions(ctx context.Context) ([]Subscription, error)
	// Subscription returns one, with its secret; ErrNotFound.
	Subscription(ctx context.Context, id string) (Subscription, error)
	// ReplaceSubscription overwrites one; an empty Secret keeps the stored
	// one.
	ReplaceSubscription(ctx context.Context, s Subscription) (Subscription, error)
	// DeleteSubscription removes one and its deliveries.
	DeleteSubscription(ctx context.Context, id string) error

	// RecordStates records the events of the changes whose state differs
	// from the recorded one, in order, in one transaction; it returns the
	// events recorded.
	RecordStates(ctx context.Context, changes []StateChange) ([]Event, error)
	// AddEvent records e unless an event with its id exists (reported
	// false).
	AddEvent(ctx context.Context, e Event) (bool, error)
	// AddTestEvent records e for subscription id alone.
	AddTestEvent(ctx context.Context, id string, e Event) error

	// ClaimDeliveries leases up to max deliveries that are due at now to
	// node until now+lease: for each subscription, only its oldest
	// pending delivery, so that events arrive in order. A lease that ran
	// out (its node died) passes the delivery to the next claimer.
	ClaimDeliveries(ctx context.Context, node string, now time.Time, lease time.Duration, max int) ([]Claim, error)
	// FinishDelivery records an attempt of a delivery node holds; a lost
	// lease records nothing.
	FinishDelivery(ctx context.Context, node string, c Claim, a Attempt) error
	// Deliveries lists a subscription's deliveries, newest first.
	Deliveries(ctx context.Context, id string, p Page) (DeliveryList, error)
	// NotifyBacklog is what waits for delivery.
	NotifyBacklog(ctx context.Context) (Backlog, error)
	// PruneNotifications deletes the finished (delivered, failed)
	// deliveries of events older than before, and those events once no
	// delivery is left; it says how many deliveries went. Pending ones
	// stay, whatever their age.
	PruneNotifications(ctx context.Context, before time.Time) (int64, error)
}

// Deliver fans e out to the subscriptions that want it, calling add for
// each (the stores' shared rule).
func Deliver(subs []Subscription, e *Event, add func(sub string) error) error {
	for i := range subs {
		if subs[i].Wants(e) {
			if err := add(subs[i].ID); err != nil {
				return err
			}
		}
	}
	return nil
}
