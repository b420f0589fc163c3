package pools

import "time"

// OriginKey names an origin: pool id and origin name (origin names are
// unique within a pool).
type OriginKey struct {
	Pool   string
	Origin string
}

// PoolRegion names a pool as seen from one region (for RTT).
type PoolRegion struct {
	Pool   string
	Region string
}

// OriginHealth is the agreed state of one origin.
type OriginHealth struct {
	Healthy bool
	Reason  string // why not healthy
}

// Health is the health view that steering compiles into a snapshot: the
// state every node agrees on, computed from all nodes' published views.
// An origin absent from Origins counts as healthy (no result yet).
type Health struct {
	Origins map[OriginKey]OriginHealth
	// RTT is the smoothed health-check round trip of a pool from a region,
	// for dynamic_latency steering.
	RTT map[PoolRegion]time.Duration
}

// OriginState is one node's latest knowledge of one origin.
type OriginState struct {
	Pool    string `json:"pool"`
	Origin  string `json:"origin"`
	Healthy bool   `json:"healthy"`
	Reason  string `json:"reason,omitempty"`
	// RTT of the last successful check, smoothed (EWMA), in nanoseconds.
	RTT       time.Duration `json:"rtt"`
	CheckedAt time.Time     `json:"checked_at"`
}

// NodeHealth is one node's whole health view, published as one record per
// node on a fixed cadence and at once on a state change.
type NodeHealth struct {
	Node      string        `json:"node"`
	Region    string        `json:"region"`
	Published time.Time     `json:"published"`
	Origins   []OriginState `json:"origins"`
}
