package pools

import "context"

// Kind names a resource collection; it is also the REST path segment.
type Kind string

const (
	KindZone         Kind = "zones"
	KindMonitor      Kind = "monitors"
	KindPool         Kind = "pools"
	KindLoadBalancer Kind = "load_balancers"
	KindNetwork      Kind = "networks"
)

// Kinds lists every resource kind in dependency order (referenced first).
var Kinds = []Kind{KindZone, KindMonitor, KindPool, KindLoadBalancer, KindNetwork}

// StoredKinds are every kind a store keeps: Kinds, shifts and rollouts.
var StoredKinds = append(append([]Kind{}, Kinds...), KindShift, KindRollout)

// Object is any stored resource.
type Object interface {
	Kind() Kind
	ObjectMeta() *Meta
	// Validate returns a *ValidationError listing every bad field; refs
	// may be nil to skip cross-object checks.
	Validate(refs References) error
}

func (z *Zone) Kind() Kind         { return KindZone }
func (m *Monitor) Kind() Kind      { return KindMonitor }
func (p *Pool) Kind() Kind         { return KindPool }
func (l *LoadBalancer) Kind() Kind { return KindLoadBalancer }
func (n *Network) Kind() Kind      { return KindNetwork }

func (z *Zone) ObjectMeta() *Meta         { return &z.Meta }
func (m *Monitor) ObjectMeta() *Meta      { return &m.Meta }
func (p *Pool) ObjectMeta() *Meta         { return &p.Meta }
func (l *LoadBalancer) ObjectMeta() *Meta { return &l.Meta }
func (n *Network) ObjectMeta() *Meta      { return &n.Meta }

// New returns a fresh object of a kind with its defaults, ready to be
// decoded into; nil for an unknown kind.
func New(k Kind) Object {
	switch k {
	case KindZone:
		z := DefaultZone()
		return &z
	case KindMonitor:
		m := DefaultMonitor()
		return &m
	case KindPool:
		p := DefaultPool()
		return &p
	case KindLoadBalancer:
		l := DefaultLoadBalancer()
		return &l
	case KindNetwork:
		return &Network{}
	case KindShift:
		return &Shift{}
	case KindRollout:
		return &Rollout{}
	}
	return nil
}

// Page selects one page of a list, ordered by creation time then id.
type Page struct {
	Page    int // 1-based; 0 means 1
	PerPage int // 0 means DefaultPerPage; at most MaxPerPage
}

// ListResult is one page and the total count.
type ListResult struct {
	Items      []Object
	TotalCount int
}

// Change is what a store's watcher reports.
type Change struct {
	// Revision is the global configuration revision after the change (0
	// when only health changed).
	Revision int64
	// Health is set when a node published a change to its health (not
	// for a heartbeat alone).
	Health bool
	// Drain is set when a drain was asked or lifted, of any node: each
	// node reads its own at once (ReportNode) rather than at its next
	// report.
	Drain bool
	// Feeds is set when a word was fed in (FeedStore).
	Feeds bool
}

// Store keeps the configuration. Every write validates the object in full
// (with its references) inside one transaction, bumps the object's and the
// global revision, and notifies watchers. Errors: *ValidationError,
// ErrNotFound, ErrStale, *ConflictError, ErrUnavailable (wrapped).
type Store interface {
	Get(ctx context.Context, k Kind, id string) (Object, error)
	List(ctx context.Context, k Kind, p Page) (ListResult, error)
	// Create stores a new object; an empty ID gets NewID().
	Create(ctx context.Context, o Object) (Object, error)
	// Replace overwrites an existing object. ifRevision > 0 must equal the
	// stored revision (else ErrStale). A pool or load balancer that a
	// rollout moves is refused (*StateError) until the rollout ends.
	Replace(ctx context.Context, o Object, ifRevision int64) (Object, error)
	// Delete removes an object; *ConflictError when another refers to it.
	Delete(ctx context.Context, k Kind, id string, ifRevision int64) error
	// UpdateRecords changes some of a zone's static records (see
	// UpdateRecordsIn) and returns the zone after it; ifRevision > 0 must
	// be the zone's revision (else ErrStale).
	UpdateRecords(ctx context.Context, zoneID string, ifRevision int64, c RecordChange) (*Zone, error)

	// Config reads the whole configuration in one consistent snapshot;
	// a kind without objects is an empty list, not nil (NewConfig).
	Config(ctx context.Context) (*Config, error)
	// Revision is the global configuration revision.
	Revision(ctx context.Context) (int64, error)
	// Watch reports changes until ctx ends. Notifications may be lost
	// (a dropped connection): callers also poll Revision.
	Watch(ctx context.Context) <-chan Change

	ChangeFeed

	// PublishHealth records a node's heartbeat and the changes in u, in
	// one transaction (Full replaces whatever the node published before).
	PublishHealth(ctx context.Context, u HealthUpdate) error
	// HealthSince returns one update per node that has published, ordered
	// by node name: the node's heartbeat and what changed since the
	// reader's cursor for it (cursors by node name). The update is Full
	// when the reader has no cursor for the node, or one the store cannot
	// follow (another epoch). Each carries the cursor for the next read.
	HealthSince(ctx context.Context, cursors map[string]HealthCursor) ([]HealthUpdate, error)
	// HealthViews returns every node's view, ordered by node name, each
	// origin's CheckedAt being the node's heartbeat; pool not empty keeps
	// that pool's origins only.
	HealthViews(ctx context.Context, pool string) ([]NodeHealth, error)

	AuditLog          // audit.go
	TokenStore        // tokens.go
	TSIGKeyStore      // tsig.go
	KeyStore          // dnssec_store.go
	CookieSecretStore // cookie_secret.go
	ShiftStore        // shift.go
	RolloutStore      // rollout.go
	SafetyRulesStore  // safety_rules.go
	AnalyticsStore    // analytics.go
	NotifyStore       // notify.go
	VersionStore      // rollback.go
	NodeStore         // nodes.go
	RUMStore          // rum.go
	FeedStore         // feed.go

	Close() error
}
