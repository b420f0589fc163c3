// Package externaldns holds the end-to-end test of glb-externaldns with
// ExternalDNS at the version go.mod pins, against the real glb-externaldns
// and glbd: the real ExternalDNS binary (go.mod's tool directive), or with
// EXTERNALDNS=inprocess its webhook client and planner driven in process
// as its controller drives them, both fed through its connector source.
// It is a module of its own so that ExternalDNS's dependency tree stays
// out of glb's go.mod; `make test-externaldns` (in make test) and `make
// test-externaldns-inprocess` run it.
package externaldns
