// Package dnsserver is the authoritative DNS server of glb: UDP and TCP
// listeners, the query handler and its metrics.
//
// Queries are read straight from the wire into a stack value and answered
// from the published Snapshot into a reused buffer: one atomic load per
// query, no lock, no allocation, no logging. Zones, names (with empty
// non-terminals), SOA, NS, static records and every origin's A, AAAA or
// CNAME record are packed once by Compile; a load balancer name is
// answered by steering.Snapshot.Decide, and the answer copies the chosen
// origins' records with the load balancer's TTL written in.
//
// Behaviour (SPEC §2 step 1 and step 8, RFC 1034, 2308, 6891, 7766, 7871,
// 8482):
//
//   - outside the served zones, or class not IN: REFUSED without AA;
//     AXFR and IXFR: REFUSED (zones are replicated through the store);
//   - inside: AA; NXDOMAIN for a name that does not exist, NODATA for one
//     without the type (empty non-terminals included), both with the SOA
//     in authority at TTL min(SOA TTL, MINIMUM);
//   - a CNAME answers every type and is followed while its target is a
//     served name (load balancer names included), at most 8 hops;
//   - ANY: one HINFO "RFC8482" (RFC 8482 §4.2);
//   - before the first Publish: SERVFAIL, so that resolvers move on to
//     another server at once and cache nothing;
//   - opcodes other than QUERY: NOTIMP with only QR and the opcode set and
//     every section empty; responses (QR=1) and runts are dropped;
//     QDCOUNT ≠ 1 or a broken message: FORMERR;
//   - EDNS: an OPT in the reply iff the query had one, version 0, payload
//     1232, DO echoed, unknown options and flags dropped; version ≠ 0:
//     BADVERS; two OPTs, an OPT not at the root or a bad option: FORMERR
//     with an OPT;
//   - UDP replies are limited to min(client payload, 1232), at least 512
//     (512 without EDNS); one that does not fit is sent with TC and empty
//     sections, so no partial RRset ever reaches a cache;
//   - ECS is validated (family, source length, address length, bits beyond
//     the prefix, scope 0) and echoed with the scope of the answer: the
//     decision's Scope for a load balancer answer, 0 otherwise.
//   - DNSSEC (zones with dnssec enabled and an active key, queries with
//     DO set): every RRset of the answer and authority sections carries
//     its RRSIG, made online by the zone's active key and kept in a
//     bounded, lock-free signature cache (package dnssec); the apex
//     serves DNSKEY, CDS and CDNSKEY, signed by every key in the DNSKEY
//     RRset; negative answers carry RFC 9824 compact denial (one NSEC at
//     the query name, next name \000.name), a name that does not exist
//     being answered NOERROR with NXNAME in the NSEC bitmap.
//
// Zone cuts (RFC 1034 §4.2.1, referral.go): NS records on a name below
// the apex delegate that subtree. A query at or below the cut gets a
// referral (NOERROR, AA clear, the NS set in authority, the A/AAAA of
// nameservers inside the zone in additional); a DS query at the cut is
// answered by the parent with AA. Records below a cut serve only as glue.
// An apex NS answer carries the same in-zone glue; nothing else is added
// unsolicited.
//
// On the public internet (cookie.go, rrl.go, chaos.go, tcp_pressure.go):
// DNS cookies (RFC 7873, RFC 9018 server cookies from a secret the nodes
// share; a malformed cookie is FORMERR), response rate limiting per
// (client network, answer) with BIND/Knot slip semantics in a fixed,
// lock-free table, NSID and CHAOS identity, and TCP admission that closes
// the longest-idle connection at the limit.
package dnsserver
