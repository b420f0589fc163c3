package embedded

import "github.com/glb-dns/glb/pools"

// The file's layout, every bucket and key in one place, as the
// migrations are PostgreSQL's. Open makes the buckets of openBuckets when
// they are missing; the others are made by their first write (or by
// initRefs and initChanges), so that files from before them open
// unchanged.

// Configuration: one bucket per kind (id → JSON object), an order index per
// kind (created_on ‖ id → nothing) for pagination, a unique index per kind
// with a unique key (key → id), and the global revision in meta.
var (
	metaBucket  = []byte("meta")
	revisionKey = []byte("revision")
)

func objectBucket(k pools.Kind) []byte { return []byte(k) }
func orderBucket(k pools.Kind) []byte  { return []byte(string(k) + ".order") }
func uniqueBucket(k pools.Kind) []byte { return []byte(string(k) + ".unique") }

// The change log: one key per object written or deleted, revision ‖ kind
// ‖ 0 ‖ id, no value. Revisions at or below the horizon (in the meta
// bucket) are no longer covered: pruned, or written before the log.
var (
	changesBucket = []byte("changes")
	horizonKey    = []byte("changes_horizon")
)

// The reference index: for each reference from one object to another, the
// key target kind ‖ 0 ‖ target id ‖ 0 ‖ referrer kind ‖ 0 ‖ referrer id,
// whose value is the referrer's name. Referrers is a scan of one prefix,
// so that a write costs what it touches: every write of a pool lists the
// load balancers using it (for its event), and a scan of every load
// balancer there made a sync of a thousand names cost a million decodes.
var refsBucket = []byte("refs")

// safetyRulesKey holds the global safety rules in the meta bucket; absent
// until the first write, so files from before them open unchanged.
var safetyRulesKey = []byte("safety_rules")

// Health is kept as changes, as in PostgreSQL (migration 006):
//
//	health.nodes    node → heartbeat (region, published, epoch, seq)
//	health.origins  node ‖ pool ‖ origin → the node's state of the origin and the seq that wrote it
//	health.log      node ‖ seq ‖ pool ‖ origin → nothing: the origins in the order they changed
//
// Each string in a key is preceded by its length (uvarint), so that keys
// of one node share a prefix and no name can run into the next. A reader
// at seq s seeks node ‖ s+1 in health.log and finds exactly the origins
// written since, each once, at its latest seq.
var (
	healthNodesBucket   = []byte("health.nodes")
	healthOriginsBucket = []byte("health.origins")
	healthLogBucket     = []byte("health.log")
	// oldHealthBucket held whole views (one per node) before health was
	// published as changes; Open drops it.
	oldHealthBucket = []byte("health")
)

// The audit log: sequence number → JSON entry, and the last health state
// recorded per origin ("pool/origin" → 0 or 1).
var (
	auditBucket       = []byte("audit")
	auditHealthBucket = []byte("audit.health")
)

// shiftExpiryBucket holds the ids of shifts whose expiry is audited.
var shiftExpiryBucket = []byte("audit.shift_expiry")

// shiftStartBucket holds the ids of scheduled shifts whose start is
// audited.
var shiftStartBucket = []byte("audit.shift_start")

// rolloutStepBucket holds "id/step" for the rollout steps audited.
var rolloutStepBucket = []byte("audit.rollout_step")

// Tokens: name → stored token (with its hash), and hash → name.
var (
	tokenBucket     = []byte("tokens")
	tokenHashBucket = []byte("tokens.hash")
)

// tsigBucket: key name → stored key (with its secret).
var tsigBucket = []byte("tsig")

// keysBucket maps a zone id to its JSON key list. It is made on the first
// key write, so files from before DNSSEC open unchanged.
var keysBucket = []byte("dnssec_keys")

// cookieBucket holds the cookie secret under cookieKey. It is made on the
// first use, so files from before cookies open unchanged.
var (
	cookieBucket = []byte("cookie_secret")
	cookieKey    = []byte("secret")
)

// Notifications: subscriptions (id → stored subscription, with its
// secret), events (seq → event), event ids (id → seq), deliveries
// (subscription id ‖ 0 ‖ seq → stored delivery) and the recorded states
// (key → state). One node uses the file, so a claim is a lease written
// like any other field.
var (
	notifySubBucket      = []byte("notify.subscriptions")
	notifyEventBucket    = []byte("notify.events")
	notifyEventIDBucket  = []byte("notify.event_ids")
	notifyDeliveryBucket = []byte("notify.deliveries")
	notifyStateBucket    = []byte("notify.state")
)

// answerBucket holds the answer counts: load balancer NUL step bucket
// (8 bytes, big-endian Unix seconds) node NUL pool NUL origin NUL region
// NUL country NUL rcode → answers (8 bytes). The load balancer and step
// lead, so that a read is one range per step. Made by the first write.
var answerBucket = []byte("answer_counts")

// sampleBucket holds the query samples: load balancer key (8 bytes)
// minute (8) qtype (2) node NUL subnet → queries (8), all big-endian.
// Made by the first write.
var sampleBucket = []byte("query_samples")

// openBuckets are the buckets Open makes when they are missing.
func openBuckets() [][]byte {
	names := [][]byte{metaBucket,
		healthNodesBucket, healthOriginsBucket, healthLogBucket,
		auditBucket, auditHealthBucket, tokenBucket, tokenHashBucket,
		tsigBucket, shiftExpiryBucket, shiftStartBucket, rolloutStepBucket,
		notifySubBucket, notifyEventBucket, notifyEventIDBucket, notifyDeliveryBucket, notifyStateBucket}
	for _, k := range pools.StoredKinds {
		names = append(names, objectBucket(k), orderBucket(k), uniqueBucket(k))
	}
	return names
}

// nodesBucket holds the fleet: node name → its record
// (pools.EncodeNode); made by the first report.
var nodesBucket = []byte("nodes")

// feedBucket holds the words fed in: pool ‖ origin ‖ monitor, each
// length-prefixed as in the health buckets, → the word as JSON. Made by
// the first write.
var feedBucket = []byte("feeds")
