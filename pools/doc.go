// Package pools is glb's domain model: zones, monitors, pools and their
// origins, load balancers and operator networks, their validation, the
// health view that steering reads, and the Store interface that the
// PostgreSQL and embedded stores implement. It does no I/O.
package pools
