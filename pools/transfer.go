package pools

import (
	"fmt"
	"net/netip"
)

// ZoneTransfer lets secondaries follow a zone by AXFR and IXFR, and tells
// them of changes by NOTIFY. A request is allowed when its source address
// is in Allow (when Allow is set) and it is signed with one of TSIGKeys
// (when TSIGKeys is set); one of the two must be set.
type ZoneTransfer struct {
	// Allow lists the networks (CIDR) that may transfer the zone.
	Allow []string `json:"allow"`
	// TSIGKeys names the TSIG keys (tsig_keys) a request must be signed
	// with; NOTIFY messages are signed with the first.
	TSIGKeys []string `json:"tsig_keys"`
	// Notify lists the secondaries told of every change, "addr:port".
	Notify []string `json:"notify"`
	// MinInterval is the least time in seconds between two changes that
	// health alone makes (and so between their NOTIFYs). Default 5.
	MinInterval int `json:"min_interval"`
}

// DefaultTransferMinInterval is min_interval when none is given.
const DefaultTransferMinInterval = 5

// Enabled reports whether any secondary may transfer the zone.
func (t *ZoneTransfer) Enabled() bool {
	return t != nil && (len(t.Allow) > 0 || len(t.TSIGKeys) > 0)
}

// Interval is MinInterval with its default.
func (t *ZoneTransfer) Interval() int {
	if t == nil || t.MinInterval == 0 {
		return DefaultTransferMinInterval
	}
	return t.MinInterval
}

// AllowPrefixes parses Allow (validated already).
func (t *ZoneTransfer) AllowPrefixes() []netip.Prefix {
	var out []netip.Prefix
	for _, a := range t.Allow {
		if p, err := netip.ParsePrefix(a); err == nil {
			out = append(out, p.Masked())
		} else if ip, err := netip.ParseAddr(a); err == nil {
			out = append(out, netip.PrefixFrom(ip, ip.BitLen()))
		}
	}
	return out
}

func (t *ZoneTransfer) check(z *Zone, e *errs) {
	if t == nil {
		return
	}
	for i, a := range t.Allow {
		if _, err := netip.ParsePrefix(a); err != nil {
			if _, err := netip.ParseAddr(a); err != nil {
				e.add(fmt.Sprintf("transfer.allow[%d]", i), "%q is not a CIDR or an address", a)
			}
		}
	}
	for i, k := range t.TSIGKeys {
		if msg := checkHostname(k, false); msg != "" {
			e.add(fmt.Sprintf("transfer.tsig_keys[%d]", i), "key name %s", msg)
		}
	}
	for i, n := range t.Notify {
		ap, err := netip.ParseAddrPort(n)
		if err != nil || ap.Port() == 0 {
			e.add(fmt.Sprintf("transfer.notify[%d]", i), "%q is not addr:port (e.g. 192.0.2.1:53 or [2001:db8::1]:53)", n)
		}
	}
	if t.MinInterval < 0 || t.MinInterval > 3600 {
		e.add("transfer.min_interval", "must be in [0, 3600] seconds (0: the default, 5)")
	}
	if len(t.Notify) > 0 && !t.Enabled() {
		e.add("transfer.notify", "secondaries told of changes must be allowed to transfer: set allow or tsig_keys")
	}
	if t.Enabled() && z.DNSSEC.Enabled {
		e.add("transfer", "a signed zone cannot be transferred: glb signs each answer online, so a secondary would serve it unsigned")
	}
}
