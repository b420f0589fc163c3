// Package externaldns holds the end-to-end test of glb-externaldns with
// ExternalDNS's own code at the version go.mod pins: its webhook client
// and its planner, driven as its controller drives them, against the real
// glb-externaldns and glbd. It is a module of its own so that ExternalDNS's
// dependency tree stays out of glb's go.mod; `make test-externaldns` runs
// it.
package externaldns
