// Package zonekeys manages the lifecycle of the zones' DNSSEC keys: it
// makes a zone's key (ECDSA P-256, algorithm 13, one combined signing key
// per zone), takes the steps of a key rollover, and gives the public parts
// (DNSKEY, DS) that may leave the store. The API and the nodes change keys
// with it; the online signer (dnsserver/dnssec) only reads the keys the
// configuration carries, and knows nothing of how they came to be.
//
// Keys are pools.ZoneKey values, kept by the store; miekg/dns makes and
// encodes them and its types stay inside this package.
package zonekeys
