package pools

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// KindFeed is the audit kind of a word fed in; its object id is
// "pool/origin/monitor".
const KindFeed Kind = "feeds"

// Sources of a word.
const (
	FeedSourceAPI          = "api"          // PUT /pools/{id}/origins/{name}/feed
	FeedSourceAlertmanager = "alertmanager" // POST /feeds/alertmanager
)

// MaxFeedReason bounds a word's reason, in characters.
const MaxFeedReason = 512

// FeedWord is what another system said of one origin under one feed
// monitor of its pool's group: up or down, why, and optionally its load.
// It holds until Expires, on every node's own clock: a word past it is
// silent, and a silent feed sees the origin up (fail open). A new word for
// the same origin and monitor replaces it.
type FeedWord struct {
	Pool    string `json:"pool"`
	Origin  string `json:"origin"`
	Monitor string `json:"monitor"`
	Up      bool   `json:"up"`
	Reason  string `json:"reason,omitempty"`
	// Load is the origin's load in [0, 1]; nil when the word carries none.
	Load   *float64 `json:"load,omitempty"`
	Source string   `json:"source"`
	// At is when the word was received; Expires when it stops counting.
	At      time.Time `json:"received_at"`
	Expires time.Time `json:"expires_at"`
	// Alerts (Alertmanager) are the alerts firing for the origin, by
	// fingerprint: the origin is down while one fires. Each webhook adds
	// the alerts it says fire and removes those it says resolved
	// (MergeFeed), so that alerts notified apart (Alertmanager groups
	// by alertname by default) do not resolve one another.
	Alerts []FeedAlert `json:"alerts,omitempty"`
	// Resolved is, on a word given to SetFeeds, the fingerprints of the
	// alerts it resolves; never stored.
	Resolved []string `json:"-"`
}

// FeedAlert is one Alertmanager alert firing for an origin.
type FeedAlert struct {
	Fingerprint string `json:"fingerprint"`
	Summary     string `json:"summary"`
}

// Key names the origin the word is about.
func (w *FeedWord) Key() OriginKey { return OriginKey{Pool: w.Pool, Origin: w.Origin} }

// ID is the word's audit object id.
func (w *FeedWord) ID() string { return w.Pool + "/" + w.Origin + "/" + w.Monitor }

// Live reports whether the word still counts at now.
func (w *FeedWord) Live(now time.Time) bool { return now.Before(w.Expires) }

// Same reports whether two words say the same thing (state, reason, load
// and source), whenever received: a renewal.
func (w *FeedWord) Same(o *FeedWord) bool {
	sameLoad := (w.Load == nil) == (o.Load == nil) && (w.Load == nil || *w.Load == *o.Load)
	return w.Up == o.Up && w.Reason == o.Reason && w.Source == o.Source && sameLoad && slices.Equal(w.Alerts, o.Alerts)
}

// MergeFeed is the word to store when w arrives while before (nil: none)
// is stored. A word from the API replaces what was there. A word from
// Alertmanager carries the alerts its webhook says fire (Alerts) and
// those it says resolved (Resolved): they are merged with the alerts of
// before, when it is a live Alertmanager word, and the origin is down
// while any fires, with the first one's summary as the reason (and how
// many more); up with w's reason once none does.
func MergeFeed(before *FeedWord, w FeedWord) FeedWord {
	fired, resolved := w.Alerts, w.Resolved
	w.Alerts, w.Resolved = nil, nil
	if w.Source != FeedSourceAlertmanager {
		return w
	}
	if before != nil && before.Source == FeedSourceAlertmanager && before.Live(w.At) {
		w.Alerts = append(w.Alerts, before.Alerts...)
	}
	for _, a := range fired {
		if i := slices.IndexFunc(w.Alerts, func(b FeedAlert) bool { return b.Fingerprint == a.Fingerprint }); i >= 0 {
			w.Alerts[i] = a
		} else {
			w.Alerts = append(w.Alerts, a)
		}
	}
	w.Alerts = slices.DeleteFunc(w.Alerts, func(a FeedAlert) bool { return slices.Contains(resolved, a.Fingerprint) })
	if len(w.Alerts) == 0 {
		w.Alerts = nil
	}
	w.Up = w.Alerts == nil
	if !w.Up {
		w.Reason = w.Alerts[0].Summary
		if n := len(w.Alerts) - 1; n > 0 {
			w.Reason += fmt.Sprintf(" (and %d more alert(s))", n)
		}
	}
	return w
}

// FeedStore keeps the words fed in: one per origin and feed monitor.
type FeedStore interface {
	// SetFeeds stores words in one transaction, each replacing the word
	// of its origin and monitor as MergeFeed says, audits each one that
	// says something the stored one did not (Same: a renewal only moves
	// the expiry), and notifies watchers (Change.Feeds). It returns the
	// words as stored. The caller checked that their origins and
	// monitors exist.
	SetFeeds(ctx context.Context, words []FeedWord) ([]FeedWord, error)
	// Feeds returns the words stored, live or not, ordered by pool,
	// origin and monitor; pool not empty keeps that pool's only.
	Feeds(ctx context.Context, pool string) ([]FeedWord, error)
	// PruneFeeds deletes the words that expired before before and says
	// how many.
	PruneFeeds(ctx context.Context, before time.Time) (int64, error)
}

// FeedAudit is the audit entry of word replacing before (nil: none): a
// create or an update of kind feeds, at revision 0 (no configuration
// changed), by the caller in ctx.
func FeedAudit(ctx context.Context, before *FeedWord, word FeedWord) (AuditEntry, error) {
	action, b := ActionCreate, any(nil)
	if before != nil {
		action, b = ActionUpdate, before
	}
	return NewAuditEntry(ctx, 0, action, KindFeed, word.ID(), b, word, word.At)
}

// FeedRequest is the body of PUT /pools/{id}/origins/{name}/feed.
type FeedRequest struct {
	// Up is required: what the feed says of the origin.
	Up     *bool  `json:"up"`
	Reason string `json:"reason"`
	// TTL in seconds; absent: the feed monitor's ttl.
	TTL *int `json:"ttl"`
	// Load in [0, 1]; absent: none.
	Load *float64 `json:"load"`
	// Monitor names the feed monitor when the group has several.
	Monitor string `json:"monitor"`
}

// Validate lists every bad field of r.
func (r *FeedRequest) Validate() error {
	var e errs
	if r.Up == nil {
		e.add("up", "required: true or false")
	}
	checkFeedReason(&e, "reason", r.Reason)
	if r.TTL != nil {
		inRange(&e, "ttl", *r.TTL, 1, MaxFeedTTL)
	}
	if r.Load != nil {
		CheckLoad(&e, "load", *r.Load)
	}
	return e.err()
}

func checkFeedReason(e *errs, path, s string) {
	if n := utf8.RuneCountInString(s); n > MaxFeedReason {
		e.add(path, "at most %d characters (%d given)", MaxFeedReason, n)
	}
	if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
		e.add(path, "must be UTF-8 text without control characters")
	}
}

// CheckLoad adds an error at path unless v is a load in [0, 1].
func CheckLoad(e *errs, path string, v float64) {
	if math.IsNaN(v) || v < 0 || v > 1 {
		e.add(path, "must be in [0, 1]: the share of the origin's capacity in use")
	}
}

// FeedTTL is how long a word lasts: ttl when given, else the monitor's,
// else DefaultFeedTTL.
func FeedTTL(m *Monitor, ttl *int) time.Duration {
	s := DefaultFeedTTL
	switch {
	case ttl != nil:
		s = *ttl
	case m != nil && m.TTL > 0:
		s = m.TTL
	}
	return time.Duration(s) * time.Second
}

// FeedMonitors returns the feed monitors of p's group, in group order;
// monitor finds a monitor by id (nil: none).
func (p *Pool) FeedMonitors(monitor func(id string) *Monitor) []*Monitor {
	var out []*Monitor
	for _, g := range p.Group() {
		if m := monitor(g.Monitor); m != nil && m.Type == MonitorFeed {
			out = append(out, m)
		}
	}
	return out
}

// FeedTarget picks the feed monitor of p's group that a word for p's
// origin named origin goes to: the one named (want), or the group's only
// one. The errors say what to fix: ErrNotFound for an origin p lacks, a
// *StateError when the group has no feed monitor, a *ValidationError on
// field "monitor" when want is not one of them or is needed.
func (p *Pool) FeedTarget(origin, want string, monitor func(id string) *Monitor) (*Monitor, error) {
	found := false
	for _, o := range p.Origins {
		found = found || o.Name == origin
	}
	if !found {
		return nil, fmt.Errorf("pool %s has no origin %q: %w", p.ID, origin, ErrNotFound)
	}
	feeds := p.FeedMonitors(monitor)
	if len(feeds) == 0 {
		return nil, &StateError{Message: fmt.Sprintf("pool %s has no feed monitor: add a monitor of type feed to its monitors "+
			"(must_be_healthy for the feed to take origins down, monitoring_only to only show it) and feed it again", p.ID)}
	}
	var e errs
	switch {
	case want != "":
		for _, m := range feeds {
			if m.ID == want {
				return m, nil
			}
		}
		e.add("monitor", "%q is not a feed monitor of pool %s (its feed monitors: %s)", want, p.ID, feedIDs(feeds))
	case len(feeds) > 1:
		e.add("monitor", "required: pool %s has several feed monitors (%s)", p.ID, feedIDs(feeds))
	default:
		return feeds[0], nil
	}
	return nil, e.err()
}

func feedIDs(ms []*Monitor) string {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	return strings.Join(ids, ", ")
}

// ByLoad is a pool's load_shedding.by_load: origins reporting a load
// (through a feed) above Low take a share of the pool's answers falling
// linearly to none at High; above High, none, unless every eligible
// origin is above it (fail open).
type ByLoad struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// Keep is the part of its share an origin at load keeps: 1 up to Low,
// falling linearly to 0 at High and above.
func (b *ByLoad) Keep(load float64) float64 {
	switch {
	case load <= b.Low:
		return 1
	case load >= b.High:
		return 0
	}
	return (b.High - load) / (b.High - b.Low)
}

func checkByLoad(e *errs, b *ByLoad) {
	if b == nil {
		return
	}
	lowOK := b.Low >= 0 && b.Low <= 1 // false for NaN
	highOK := b.High >= 0 && b.High <= 1
	if !lowOK {
		e.add("load_shedding.by_load.low", "must be in [0, 1]")
	}
	if !highOK {
		e.add("load_shedding.by_load.high", "must be in [0, 1]")
	}
	if lowOK && highOK && b.Low >= b.High {
		e.add("load_shedding.by_load.high", "must be above low (%v): between the two an origin's share falls", b.Low)
	}
}

// SortFeeds orders words by pool, origin and monitor, as FeedStore.Feeds
// returns them.
func SortFeeds(ws []FeedWord) {
	slices.SortFunc(ws, func(a, b FeedWord) int {
		return cmp.Or(cmp.Compare(a.Pool, b.Pool), cmp.Compare(a.Origin, b.Origin), cmp.Compare(a.Monitor, b.Monitor))
	})
}
