package pools

import (
	"net/netip"
	"strings"
)

// CanonicalName lower-cases a DNS name and strips its trailing dot; stored
// names are in this form.
func CanonicalName(s string) string {
	return strings.TrimSuffix(strings.ToLower(s), ".")
}

// checkHostname reports why s is not a valid DNS name (RFC 1035 lengths;
// letters, digits, hyphen and underscore in labels), or "" when it is.
// Wildcard owners are not served, so "*" is rejected like any bad label.
func checkHostname(s string, _ bool) string {
	s = strings.TrimSuffix(s, ".")
	if s == "" {
		return "must not be empty"
	}
	if len(s) > 253 {
		return "longer than 253 characters"
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" {
			return "has an empty label"
		}
		if len(label) > 63 {
			return "has a label longer than 63 characters"
		}
		for j := 0; j < len(label); j++ {
			c := label[j]
			ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' ||
				c == '-' && j > 0 && j < len(label)-1
			if !ok {
				return "is not a valid DNS name (label " + label + ")"
			}
		}
	}
	// RFC 3696 §2: a top-level domain is never all digits, which tells
	// a name from a mistyped IPv4 address.
	if last := s[strings.LastIndexByte(s, '.')+1:]; strings.Trim(last, "0123456789") == "" {
		return "ends in an all-numeric label " + last + ", which no top-level domain is"
	}
	return ""
}

// InZone reports whether name is zone or below it (both canonical).
func InZone(name, zone string) bool {
	return name == zone || strings.HasSuffix(name, "."+zone)
}

// ParseAddress classifies an origin address: an IP (v4 or v6, IPv4-mapped
// IPv6 unmapped) or, with ok false, a hostname to answer with a CNAME.
func ParseAddress(s string) (ip netip.Addr, isIP bool) {
	ip, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return ip.Unmap(), true
}
