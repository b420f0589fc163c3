package pools

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// Payload decodes a udp monitor's send or expect in enc (PayloadText when
// empty); hex may be spaced ("de ad be ef") and in either case.
func Payload(s, enc string) ([]byte, error) {
	switch enc {
	case "", PayloadText:
		return []byte(s), nil
	case PayloadHex:
		b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
		if err != nil {
			return nil, fmt.Errorf("not hexadecimal: %w", err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("unknown payload_encoding %q", enc)
}

// DNSRcodes are the response codes a dns monitor can expect, by name.
var DNSRcodes = map[string]int{
	"NOERROR": 0, "FORMERR": 1, "SERVFAIL": 2, "NXDOMAIN": 3, "NOTIMP": 4, "REFUSED": 5,
	"YXDOMAIN": 6, "YXRRSET": 7, "NXRRSET": 8, "NOTAUTH": 9, "NOTZONE": 10,
}

// DNSQueryTypes are the question types a dns monitor can ask, by name.
var DNSQueryTypes = map[string]uint16{
	"A": 1, "NS": 2, "CNAME": 5, "SOA": 6, "PTR": 12, "MX": 15, "TXT": 16, "AAAA": 28,
	"SRV": 33, "DS": 43, "DNSKEY": 48, "SVCB": 64, "HTTPS": 65, "CAA": 257,
}

// validateKind checks the fields of the monitor's own type.
func (m *Monitor) validateKind(e *errs) {
	switch m.Type {
	case MonitorHTTP, MonitorHTTPS:
		if m.Method == "" {
			e.add("method", "required for %s monitors", m.Type)
		}
		if !strings.HasPrefix(m.Path, "/") {
			e.add("path", "must start with /")
		}
		if msg := checkExpectedCodes(m.ExpectedCodes); msg != "" {
			e.add("expected_codes", "%s", msg)
		}
	case MonitorTCP:
		if m.Port == 0 {
			e.add("port", "required for tcp monitors")
		}
	case MonitorUDP:
		if m.Port == 0 {
			e.add("port", "required for udp monitors")
		}
		switch m.PayloadEncoding {
		case "", PayloadText, PayloadHex:
			if _, err := Payload(m.Send, m.PayloadEncoding); err != nil {
				e.add("send", "%v", err)
			}
			if _, err := Payload(m.Expect, m.PayloadEncoding); err != nil {
				e.add("expect", "%v", err)
			}
		default:
			e.add("payload_encoding", "must be text or hex")
		}
		if m.Send == "" {
			e.add("send", "required for udp monitors: an origin answers only what it is sent")
		}
	case MonitorDNS:
		if m.QueryName == "" {
			e.add("query_name", "required for dns monitors")
		} else if msg := checkHostname(strings.TrimSuffix(m.QueryName, "."), true); msg != "" {
			e.add("query_name", "%s", msg)
		}
		if _, ok := DNSQueryTypes[strings.ToUpper(m.QueryType)]; !ok {
			e.add("query_type", "must be one of %s", names(DNSQueryTypes))
		}
		if _, ok := DNSRcodes[strings.ToUpper(m.ExpectedRcode)]; !ok && m.ExpectedRcode != "" {
			e.add("expected_rcode", "must be one of %s", names(DNSRcodes))
		}
		if m.Protocol != "" && m.Protocol != DNSOverUDP && m.Protocol != DNSOverTCP {
			e.add("protocol", "must be udp or tcp")
		}
	case MonitorTLS:
		if m.ServerName != "" {
			if msg := checkHostname(m.ServerName, false); msg != "" {
				e.add("server_name", "%s", msg)
			}
		}
		inRange(e, "min_days_valid", m.MinDaysValid, 0, 3650)
	case MonitorSMTP, MonitorGRPC:
		if m.ServerName != "" {
			if msg := checkHostname(m.ServerName, false); msg != "" {
				e.add("server_name", "%s", msg)
			}
		}
		if m.Type == MonitorGRPC {
			if m.Port == 0 {
				e.add("port", "required for grpc monitors")
			}
			if len(m.Service) > 255 || strings.ContainsFunc(m.Service, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				e.add("service", "must be at most 255 characters, without control characters")
			}
		}
	case MonitorICMP:
		inRange(e, "count", m.Count, 0, 20)
		inRange(e, "max_loss", m.MaxLoss, 0, 99)
	case MonitorFeed:
		inRange(e, "ttl", m.TTL, 0, MaxFeedTTL)
		for field, l := range map[string]string{"pool_label": m.PoolLabel, "origin_label": m.OriginLabel} {
			if l != "" && !labelName(l) {
				e.add(field, "must be a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*)")
			}
		}
	default:
		e.add("type", "must be one of %s", joinTypes())
	}
}

func joinTypes() string {
	s := make([]string, len(MonitorTypes))
	for i, t := range MonitorTypes {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

func names[V any](m map[string]V) string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// labelName reports whether s is a Prometheus label name.
func labelName(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}
