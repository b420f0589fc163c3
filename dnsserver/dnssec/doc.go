// Package dnssec signs glb's answers as they are given (online signing):
// the zone's keys parsed for signing, the DNSKEY, CDS and CDNSKEY RRsets, a
// bounded signature cache keyed by RRset, and authenticated denial
// generated online with the compact denial of existence of RFC 9824. How
// keys are made and rolled is zonekeys' job; this package only reads them.
//
// Signing and verification go through miekg/dns (RRSIG.Sign, DNSKEY.ToDS,
// DNSKEY.Generate, DNSKEY.NewPrivateKey): the wire formats and the
// canonical ordering are its, not re-implemented here. What this package
// adds is what an online signer needs around them: signatures made once
// per RRset and reused from a lock-free cache, validity windows with
// jitter so that nodes do not all re-sign at once, and denial records
// built per query without allocation.
package dnssec
