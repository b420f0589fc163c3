// Package outbound decides where glbd may send the requests that API users
// point it at: notification receivers, rollout guards. It has one job: may
// glbd connect to this address (reached by this name)?
//
// By default every public address may be reached and the classes that lead
// into the nodes' own networks are refused: loopback, link-local (the cloud
// metadata services among them), private (RFC 1918, RFC 4193), shared
// (RFC 6598), multicast and unspecified. An operator allows an address,
// network or host name with --outbound-allow and refuses one more with
// --outbound-deny; a deny wins over an allow.
//
// A URL is checked when it is written (CheckURL resolves its host) and
// again at every connection (Dialer), on the address actually connected
// to: a name that resolves elsewhere later (DNS rebinding) is refused
// before a byte is sent.
package outbound

import (
	"fmt"
	"net/netip"
	"strings"
)

// Class is a range refused by default.
type Class struct {
	Name   string
	Prefix netip.Prefix
}

// Refused lists the ranges refused unless allowed, most specific first
// where they overlap (fd00:ec2::254, the AWS IPv6 metadata address, is in
// the unique local range).
var Refused = []Class{
	{"unspecified", netip.MustParsePrefix("0.0.0.0/8")},
	{"unspecified", netip.MustParsePrefix("::/128")},
	{"loopback", netip.MustParsePrefix("127.0.0.0/8")},
	{"loopback", netip.MustParsePrefix("::1/128")},
	{"link-local", netip.MustParsePrefix("169.254.0.0/16")},
	{"link-local", netip.MustParsePrefix("fd00:ec2::254/128")},
	{"link-local", netip.MustParsePrefix("fe80::/10")},
	{"private", netip.MustParsePrefix("10.0.0.0/8")},
	{"private", netip.MustParsePrefix("172.16.0.0/12")},
	{"private", netip.MustParsePrefix("192.168.0.0/16")},
	{"private", netip.MustParsePrefix("fc00::/7")},
	{"shared", netip.MustParsePrefix("100.64.0.0/10")},
	{"multicast", netip.MustParsePrefix("224.0.0.0/4")},
	{"multicast", netip.MustParsePrefix("ff00::/8")},
	{"broadcast", netip.MustParsePrefix("255.255.255.255/32")},
}

// rule is one --outbound-allow or --outbound-deny entry: a network or a
// host name (lower case, no trailing dot).
type rule struct {
	text   string
	prefix netip.Prefix
	host   string
}

func (r rule) matches(host string, a netip.Addr) bool {
	if r.host != "" {
		return host != "" && r.host == host
	}
	return r.prefix.Contains(a)
}

// Policy says where glbd may connect. The zero Policy refuses the default
// classes and allows the rest. It is immutable and safe to share.
type Policy struct {
	allow, deny []rule
}

// New returns the policy of the given allow and deny entries, each an IP
// address, a CIDR network or a host name.
func New(allow, deny []string) (*Policy, error) {
	p := &Policy{}
	var err error
	if p.allow, err = parseRules("--outbound-allow", allow); err != nil {
		return nil, err
	}
	if p.deny, err = parseRules("--outbound-deny", deny); err != nil {
		return nil, err
	}
	return p, nil
}

func parseRules(flag string, entries []string) ([]rule, error) {
	var out []rule
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		r := rule{text: flag + " " + e}
		if strings.Contains(e, "/") {
			pfx, err := netip.ParsePrefix(e)
			if err != nil {
				return nil, fmt.Errorf("%s %q: not a CIDR network (10.1.0.0/16, fd12::/48)", flag, e)
			}
			r.prefix = pfx.Masked()
		} else if a, err := netip.ParseAddr(strings.Trim(e, "[]")); err == nil {
			a = a.Unmap()
			r.prefix = netip.PrefixFrom(a, a.BitLen())
		} else {
			h := normalHost(e)
			if !validHost(h) {
				return nil, fmt.Errorf("%s %q: not an IP address, a CIDR network or a host name", flag, e)
			}
			r.host = h
		}
		out = append(out, r)
	}
	return out, nil
}

// normalHost lower-cases a host name and drops its trailing dot.
func normalHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// validHost reports whether h is a host name of letters, digits, hyphens
// and underscores in dot-separated labels, none starting or ending with
// a hyphen.
func validHost(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// RefusedError says why an address may not be reached.
type RefusedError struct {
	// Host is the name the address was reached by ("" for an address
	// written as such).
	Host string
	Addr netip.Addr
	// Rule is what refused it: "--outbound-deny 203.0.113.0/24" or the
	// default class ("loopback 127.0.0.0/8").
	Rule string
	// Default says the address is in a class refused by default, which
	// --outbound-allow can lift.
	Default bool
}

func (e *RefusedError) Error() string {
	what := e.Addr.String()
	if e.Host != "" && e.Host != what {
		what = e.Host + " (" + what + ")"
	}
	if e.Default {
		return fmt.Sprintf("outbound requests to %s are refused: %s addresses are refused by default (%s); --outbound-allow lifts it", what, strings.Fields(e.Rule)[0], e.Rule)
	}
	return fmt.Sprintf("outbound requests to %s are refused by %s", what, e.Rule)
}

// Check says whether glbd may connect to a, reached by the host name
// host ("" when the URL names the address): nil, or a *RefusedError. A
// deny entry matching the name or the address refuses; then an allow
// entry matching either allows; then the default classes refuse.
func (p *Policy) Check(host string, a netip.Addr) error {
	if p == nil {
		p = &Policy{}
	}
	host = normalHost(host)
	a = a.Unmap()
	for _, r := range p.deny {
		if r.matches(host, a) {
			return &RefusedError{Host: host, Addr: a, Rule: r.text}
		}
	}
	for _, r := range p.allow {
		if r.matches(host, a) {
			return nil
		}
	}
	if !a.IsValid() {
		return &RefusedError{Host: host, Addr: a, Rule: "unspecified (no address)", Default: true}
	}
	in := a
	if nat64.Contains(a) {
		// 64:ff9b::a.b.c.d reaches a.b.c.d through a NAT64 gateway.
		b := a.As16()
		in = netip.AddrFrom4([4]byte(b[12:]))
	}
	for _, c := range Refused {
		if c.Prefix.Contains(a) || c.Prefix.Contains(in) {
			return &RefusedError{Host: host, Addr: a, Rule: c.Name + " " + c.Prefix.String(), Default: true}
		}
	}
	return nil
}

// nat64 is the well-known NAT64 prefix (RFC 6052), whose addresses embed
// the IPv4 address they reach.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")
