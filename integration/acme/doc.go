// Package acme holds an end-to-end test that gets a certificate for a
// load-balanced name the way operators do: lego's RFC 2136 provider
// (dnsupdate) writes the DNS-01 challenge into glbd with a TSIG key, and
// the Pebble ACME test server validates it by asking glbd. It is a module
// of its own so that lego's and Pebble's dependencies stay out of glb's
// go.mod; glbd itself is built from the repository's root module and run
// as a process.
package acme
