package pools

import (
	"encoding/base64"
	"net/netip"
	"strconv"
	"strings"
)

// Content checks of the service record types: SRV (RFC 2782) and SVCB
// and HTTPS (RFC 9460). Validation must refuse whatever the DNS server's
// compile would, else a stored zone could stop compiling; presentation
// format is miekg/dns's, which quotes SvcParam values.

// checkSRV validates "priority weight port target".
func checkSRV(content string) string {
	f := strings.Fields(content)
	if len(f) != 4 {
		return `want "priority weight port target", e.g. "10 5 5060 sip.example.com."`
	}
	for i, name := range []string{"priority", "weight", "port"} {
		if _, err := strconv.ParseUint(f[i], 10, 16); err != nil {
			return name + " is not a number in [0, 65535]"
		}
	}
	if f[3] != "." {
		if msg := checkHostname(f[3], false); msg != "" {
			return "target " + msg
		}
	}
	return ""
}

// checkSVCB validates "priority target [key=value ...]" for SVCB and
// HTTPS: priority 0 (alias mode) takes no parameters (RFC 9460 §2.4.2).
func checkSVCB(content string) string {
	f := strings.Fields(content)
	if len(f) < 2 {
		return `want "priority target [key=value ...]", e.g. "1 . alpn=h2,h3 port=443"`
	}
	prio, err := strconv.ParseUint(f[0], 10, 16)
	if err != nil {
		return "priority is not a number in [0, 65535]"
	}
	if f[1] != "." {
		if msg := checkHostname(f[1], false); msg != "" {
			return "target " + msg
		}
	}
	if prio == 0 && len(f) > 2 {
		return "priority 0 (alias mode) takes no parameters"
	}
	seen := map[string]bool{}
	var mandatory []string
	for _, p := range f[2:] {
		key, val, hasVal := strings.Cut(p, "=")
		val = strings.Trim(val, `"`)
		if seen[key] {
			return "parameter " + key + " given twice"
		}
		seen[key] = true
		if msg := checkSvcParam(key, val, hasVal); msg != "" {
			return "parameter " + key + ": " + msg
		}
		if key == "mandatory" {
			mandatory = strings.Split(val, ",")
		}
	}
	return checkSvcParamSet(seen, mandatory)
}

// checkSvcParamSet checks what RFC 9460 asks of the parameters together,
// so that a record clients must ignore (or that dig reports FORMERR for)
// is not stored: each key in mandatory appears once in it and in the
// record (§8), and no-default-alpn comes with alpn (§7.1.1), as the load
// balancer's own https object requires.
func checkSvcParamSet(seen map[string]bool, mandatory []string) string {
	listed := map[string]bool{}
	for _, k := range mandatory {
		switch {
		case listed[k]:
			return "parameter mandatory: lists " + k + " twice"
		case !seen[k]:
			return "parameter mandatory: lists " + k + ", which the record does not have"
		}
		listed[k] = true
	}
	if seen["no-default-alpn"] && !seen["alpn"] {
		return "parameter no-default-alpn needs alpn: without the default protocol and without alpn no protocol is left"
	}
	return ""
}

func checkSvcParam(key, val string, hasVal bool) string {
	list := func() []string { return strings.Split(val, ",") }
	switch key {
	case "mandatory":
		for _, k := range list() {
			if k == "mandatory" {
				return "must not list itself"
			}
			if !isSvcKey(k) {
				return "not a list of parameter keys"
			}
		}
	case "alpn":
		for _, a := range list() {
			if a == "" || len(a) > 255 {
				return "not a list of protocol ids"
			}
		}
	case "no-default-alpn":
		if hasVal {
			return "takes no value"
		}
		return ""
	case "port":
		if _, err := strconv.ParseUint(val, 10, 16); err != nil {
			return "not a number in [0, 65535]"
		}
	case "ipv4hint", "ipv6hint":
		for _, a := range list() {
			ip, err := netip.ParseAddr(a)
			if err != nil || ip.Is4() != (key == "ipv4hint") || ip.Is4In6() {
				return "not a list of " + map[bool]string{true: "IPv4", false: "IPv6"}[key == "ipv4hint"] + " addresses"
			}
		}
	case "ech":
		if _, err := base64.StdEncoding.DecodeString(val); err != nil || val == "" {
			return "not base64"
		}
	default:
		if n, ok := strings.CutPrefix(key, "key"); ok {
			if v, err := strconv.ParseUint(n, 10, 16); err == nil && v <= 8 {
				return "the key has a name (mandatory, alpn, no-default-alpn, port, ipv4hint, ech, ipv6hint, dohpath, ohttp): write it by its name"
			}
		}
		if !isSvcKey(key) || !strings.HasPrefix(key, "key") {
			return "unknown key (mandatory, alpn, no-default-alpn, port, ipv4hint, ech, ipv6hint, keyNNNNN)"
		}
		return ""
	}
	if !hasVal || val == "" {
		return "needs a value"
	}
	return ""
}

func isSvcKey(k string) bool {
	switch k {
	case "mandatory", "alpn", "no-default-alpn", "port", "ipv4hint", "ech", "ipv6hint":
		return true
	}
	if n, ok := strings.CutPrefix(k, "key"); ok {
		// The generic form of a key with a name (key1 for alpn, up to
		// key8) is refused as the DNS server's parser refuses it, and
		// so are leading zeros and the reserved 65535.
		v, err := strconv.ParseUint(n, 10, 16)
		return err == nil && v > 8 && v != 65535 && n[0] != '0'
	}
	return false
}
