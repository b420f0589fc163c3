// Package steering compiles a configuration and a health view into an
// immutable Snapshot and makes the per-query decision of SPEC §2 (steps 3
// to 8) and §4: candidate pools, the chosen pool, zonal affinity, the
// origins that answer, the TTL and the ECS scope, with an optional trace of
// every step for the explain endpoint.
//
// The decision allocates nothing and takes no lock: everything it needs is
// resolved to indices and bitsets when the snapshot is compiled.
package steering
