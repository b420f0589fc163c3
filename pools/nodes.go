package pools

import (
	"context"
	"encoding/json"
	"time"
)

// KindNode is the kind of nodes in the audit log (drains); its object id
// is the node's name.
const KindNode Kind = "nodes"

// Audit actions of a node.
const (
	ActionDrain   = "drain"
	ActionUndrain = "undrain"
)

// Node states, as GET /nodes shows them and node events name them.
const (
	// NodeServing: the node reports, is not drained and is current.
	NodeServing = "serving"
	// NodeDraining: asked to drain, the node has withdrawn its routes and
	// still answers for its drain grace.
	NodeDraining = "draining"
	// NodeDrained: the grace is over; the node may be stopped.
	NodeDrained = "drained"
	// NodeStale: the node reports, but its configuration lags the store's
	// by NodeStaleAfter or more, or it could not reach the store.
	NodeStale = "stale"
	// NodeGone: no report for the gone-after time (--node-gone-after).
	NodeGone = "gone"
)

// NodeStaleAfter is how long a node may stay behind the store's revision
// before it counts as stale: a node follows a write within a second or
// two (LISTEN, else its two-second revision poll).
const NodeStaleAfter = 5 * time.Second

// NodeGoneAfter is the default of --node-gone-after.
const NodeGoneAfter = 60 * time.Second

// NodeStatus is what a node reports of itself, every second.
type NodeStatus struct {
	Name      string    `json:"name"`
	Region    string    `json:"region"`
	Version   string    `json:"version"`
	Commit    string    `json:"commit"`
	StartedAt time.Time `json:"started_at"`
	// Revision is the configuration revision the node serves (0: none).
	Revision int64 `json:"revision"`
	// SnapshotAt is when the served configuration was last known to be
	// the store's (a revision read that matched it), or when the last
	// good file it serves was written; zero when nothing is served.
	SnapshotAt time.Time `json:"snapshot_at"`
	// Store: false when the node's last read of the store failed.
	Store bool `json:"store"`
	// Checks: the origins the node checks and how many of them fail.
	Checks NodeChecks `json:"checks"`
	// AnswersPerSecond over the last minute.
	AnswersPerSecond float64       `json:"answers_per_second"`
	Listeners        NodeListeners `json:"listeners"`
	BGP              NodeBGP       `json:"bgp"`
	// Drain is the node's own part of a drain: "" (serving), NodeDraining
	// or NodeDrained.
	Drain string `json:"drain"`
	// Stopping: the node drains because it was told to stop (SIGTERM).
	Stopping bool `json:"stopping"`
	// StoreServer: where a node on PostgreSQL writes and follows (nil on
	// the embedded store).
	StoreServer *NodeStoreServer `json:"store_server,omitempty"`
}

// NodeStoreServer is where a node on PostgreSQL writes and follows the
// store.
type NodeStoreServer struct {
	// Primary is the server (address:port) the node last wrote to; it
	// changes when the node found a new primary after a failover.
	Primary string `json:"primary"`
	// Follows is where the node's follow reads (configuration, health,
	// changes) go: "primary", or "replica" (--database-read-url) while it
	// keeps up.
	Follows string `json:"follows"`
}

// NodeChecks counts a node's health checks.
type NodeChecks struct {
	Origins int `json:"origins"`
	Failing int `json:"failing"`
}

// NodeListeners are the addresses a node answers DNS on.
type NodeListeners struct {
	UDP []string `json:"udp"`
	TCP []string `json:"tcp"`
	XDP []string `json:"xdp"`
}

// NodeBGP is a node's BGP speaker: each session and what it announces.
type NodeBGP struct {
	Sessions  []BGPSession `json:"sessions"`
	Announced []string     `json:"announced"`
}

// BGPSession is one BGP peer of a node.
type BGPSession struct {
	Peer  string `json:"peer"`
	ASN   uint32 `json:"asn"`
	State string `json:"state"`
}

// NodeDrain is an operator's request that a node drain.
type NodeDrain struct {
	Reason string `json:"reason"`
	// Until: the drain lapses then (nil: until undrained).
	Until *time.Time `json:"until,omitempty"`
	At    time.Time  `json:"at"`
	By    string     `json:"by"`
}

// Active reports whether the drain holds at now.
func (d *NodeDrain) Active(now time.Time) bool {
	return d != nil && (d.Until == nil || now.Before(*d.Until))
}

// NodeRecord is a node as the store keeps it: its last report, when the
// store saw it, since when its revision has been behind the store's, and
// the drain asked of it.
type NodeRecord struct {
	Status   NodeStatus
	LastSeen time.Time
	// Missed are the store's revisions above the node's, each with the
	// first report that saw it there, oldest first: the node has lacked
	// a revision it could have had since Missed[0].At.
	Missed []MissedRevision
	Drain  *NodeDrain
}

// MissedRevision is a store revision a node's report was below.
type MissedRevision struct {
	Revision int64     `json:"revision"`
	At       time.Time `json:"at"`
}

// maxMissed bounds NodeRecord.Missed: past it the newest entry takes
// the later revisions (its time is then early, never late).
const maxMissed = 64

// BehindSince is since when the node has lacked a revision of the store
// (nil: it has none to catch up on).
func (r *NodeRecord) BehindSince() *time.Time {
	if len(r.Missed) == 0 {
		return nil
	}
	return &r.Missed[0].At
}

// NodeList is every node and the store's revision when read.
type NodeList struct {
	Revision int64
	Items    []NodeRecord
}

// NodeStore keeps the fleet: every node that has run against the store.
type NodeStore interface {
	// ReportNode records a node's status and returns the drain asked of
	// it (nil: none).
	ReportNode(ctx context.Context, st NodeStatus) (*NodeDrain, error)
	// Nodes returns every node, ordered by name.
	Nodes(ctx context.Context) (NodeList, error)
	// DrainNode asks the node to drain (d not nil) or to serve again
	// (nil) and audits it; ErrNotFound for a node never seen.
	DrainNode(ctx context.Context, name string, d *NodeDrain) (NodeRecord, error)
}

// NodeLag is how far a node is behind the store.
type NodeLag struct {
	Revisions int64   `json:"revisions"`
	Seconds   float64 `json:"seconds"`
}

// NodeView is a node as GET /nodes shows it.
type NodeView struct {
	Name      string    `json:"name"`
	Region    string    `json:"region"`
	Version   string    `json:"version"`
	Commit    string    `json:"commit"`
	StartedAt time.Time `json:"started_at"`
	LastSeen  time.Time `json:"last_seen"`
	Revision  int64     `json:"revision"`
	Lag       NodeLag   `json:"lag"`
	// SnapshotAge in seconds; null when the node serves nothing.
	SnapshotAge      *float64      `json:"snapshot_age"`
	Checks           NodeChecks    `json:"checks"`
	AnswersPerSecond float64       `json:"answers_per_second"`
	Listeners        NodeListeners `json:"listeners"`
	BGP              NodeBGP       `json:"bgp"`
	State            string        `json:"state"`
	// Why says what made the state (empty when serving).
	Why   string     `json:"why,omitempty"`
	Drain *NodeDrain `json:"drain"`
	// Store is where the node writes and follows the store (PostgreSQL
	// only).
	Store *NodeStoreServer `json:"store,omitempty"`
}

// View is r as seen at now from a store at revision rev, a node silent
// for goneAfter being gone.
func (r *NodeRecord) View(rev int64, now time.Time, goneAfter time.Duration) NodeView {
	st := r.Status
	v := NodeView{
		Name: st.Name, Region: st.Region, Version: st.Version, Commit: st.Commit, StartedAt: st.StartedAt,
		LastSeen: r.LastSeen, Revision: st.Revision, Checks: st.Checks, AnswersPerSecond: st.AnswersPerSecond,
		Listeners: st.Listeners, BGP: st.BGP, Drain: r.Drain, Store: st.StoreServer,
	}
	if v.Listeners.UDP == nil {
		v.Listeners.UDP = []string{}
	}
	if v.Listeners.TCP == nil {
		v.Listeners.TCP = []string{}
	}
	if v.Listeners.XDP == nil {
		v.Listeners.XDP = []string{}
	}
	if v.BGP.Sessions == nil {
		v.BGP.Sessions = []BGPSession{}
	}
	if v.BGP.Announced == nil {
		v.BGP.Announced = []string{}
	}
	if st.Revision < rev {
		v.Lag.Revisions = rev - st.Revision
		if since := r.BehindSince(); since != nil {
			v.Lag.Seconds = max(now.Sub(*since), 0).Seconds()
		}
	}
	if !st.SnapshotAt.IsZero() {
		age := max(now.Sub(st.SnapshotAt), 0).Seconds()
		v.SnapshotAge = &age
	}
	switch silent := now.Sub(r.LastSeen); {
	case silent >= goneAfter:
		v.State, v.Why = NodeGone, "no report for "+silent.Round(time.Second).String()
	case r.Drain.Active(now) && st.Drain == NodeDrained:
		v.State, v.Why = NodeDrained, "drained: "+r.Drain.Reason
	case r.Drain.Active(now):
		v.State, v.Why = NodeDraining, "draining: "+r.Drain.Reason
	case st.Stopping && st.Drain != "":
		v.State, v.Why = st.Drain, "stopping"
	case v.Lag.Revisions > 0 && v.Lag.Seconds >= NodeStaleAfter.Seconds():
		v.State, v.Why = NodeStale, "behind the store by "+time.Duration(v.Lag.Seconds*float64(time.Second)).Round(time.Second).String()
	case !st.Store:
		v.State, v.Why = NodeStale, "cannot read the store"
	default:
		v.State = NodeServing
	}
	return v
}

// ReportNodeIn is the upsert both stores make: r updated with st, seen at
// now from a store at revision rev.
//
// A node following a stream of writes is behind at many reports, each
// time by a revision newer than the last: it lags by how long it has
// lacked the oldest revision it still lacks, not by how long its reports
// have found it behind.
func ReportNodeIn(r *NodeRecord, st NodeStatus, rev int64, now time.Time) {
	r.Status, r.LastSeen = st, StoreTime(now)
	i := 0
	for i < len(r.Missed) && r.Missed[i].Revision <= st.Revision {
		i++
	}
	r.Missed = r.Missed[i:]
	switch n := len(r.Missed); {
	case rev <= st.Revision || n > 0 && r.Missed[n-1].Revision >= rev:
	case n >= maxMissed:
		r.Missed[n-1].Revision = rev
	default:
		r.Missed = append(r.Missed, MissedRevision{Revision: rev, At: StoreTime(now)})
	}
	if len(r.Missed) == 0 {
		r.Missed = nil
	}
}

// DrainAudit is the audit entry of a drain (d not nil) or undrain of a
// node whose drain was before.
func DrainAudit(ctx context.Context, name string, before, d *NodeDrain, now time.Time) (AuditEntry, error) {
	action := ActionDrain
	var after any = d
	if d == nil {
		action, after = ActionUndrain, nil
	}
	var b any
	if before != nil {
		b = before
	}
	return NewAuditEntry(ctx, 0, action, KindNode, name, b, after, now)
}

// nodeDoc is how the stores keep a record.
type nodeDoc struct {
	Status   NodeStatus       `json:"status"`
	LastSeen time.Time        `json:"last_seen"`
	Missed   []MissedRevision `json:"missed,omitempty"`
	Drain    *NodeDrain       `json:"drain,omitempty"`
}

// EncodeNode is r as a store keeps it.
func EncodeNode(r *NodeRecord) ([]byte, error) {
	return json.Marshal(nodeDoc{Status: r.Status, LastSeen: r.LastSeen, Missed: r.Missed, Drain: r.Drain})
}

// DecodeNode reads what EncodeNode wrote.
func DecodeNode(b []byte) (NodeRecord, error) {
	var d nodeDoc
	if err := json.Unmarshal(b, &d); err != nil {
		return NodeRecord{}, err
	}
	return NodeRecord{Status: d.Status, LastSeen: d.LastSeen, Missed: d.Missed, Drain: d.Drain}, nil
}
