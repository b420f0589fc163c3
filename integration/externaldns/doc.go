// Package externaldns holds the end-to-end test of glb-externaldns with
// ExternalDNS at the version go.mod pins, against the real glb-externaldns
// and glbd: by default its webhook client and planner driven in process
// as its controller drives them, and with EXTERNALDNS=binary the real
// binary (go.mod's tool directive), both fed through its connector source.
// It is a module of its own so that ExternalDNS's dependency tree stays
// out of glb's go.mod; `make test-externaldns` and `make
// test-externaldns-binary` run it.
package externaldns
