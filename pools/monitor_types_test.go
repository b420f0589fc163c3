package pools

import (
	"bytes"
	"slices"
	"testing"
)

// Each new monitor type names the field at fault, and a well-formed one
// passes.
func TestMonitorTypeFields(t *testing.T) {
	cases := []struct {
		name string
		json string
		want []string // error paths; none: valid
	}{
		{"udp text", `{"type": "udp", "port": 7, "send": "PING", "expect": "PONG"}`, nil},
		{"udp hex", `{"type": "udp", "port": 7, "send": "de ad BE EF", "expect": "beef", "payload_encoding": "hex"}`, nil},
		{"udp without port or send", `{"type": "udp"}`, []string{"port", "send"}},
		{"udp bad hex", `{"type": "udp", "port": 7, "send": "xyz", "expect": "abc", "payload_encoding": "hex"}`, []string{"expect", "send"}},
		{"udp bad encoding", `{"type": "udp", "port": 7, "send": "x", "payload_encoding": "base64"}`, []string{"payload_encoding"}},
		{"dns", `{"type": "dns", "query_name": "www.example.com", "query_type": "A"}`, nil},
		{"dns tcp, rcode, answer", `{"type": "dns", "query_name": "example.com.", "query_type": "txt", "protocol": "tcp", "expected_rcode": "nxdomain", "expected_answer": "v=spf1"}`, nil},
		{"dns without question", `{"type": "dns"}`, []string{"query_name", "query_type"}},
		{"dns bad fields", `{"type": "dns", "query_name": "a..b", "query_type": "AXFR", "protocol": "quic", "expected_rcode": "OK", "port": 70000}`,
			[]string{"expected_rcode", "port", "protocol", "query_name", "query_type"}},
		{"tls", `{"type": "tls", "server_name": "www.example.com", "min_days_valid": 14}`, nil},
		{"tls bad fields", `{"type": "tls", "server_name": "-bad-.example..com", "min_days_valid": -1}`, []string{"min_days_valid", "server_name"}},
		{"smtp", `{"type": "smtp", "starttls": true, "server_name": "mx.example.com"}`, nil},
		{"smtp bad server_name", `{"type": "smtp", "server_name": "mx..example.com"}`, []string{"server_name"}},
		{"grpc", `{"type": "grpc", "port": 50051, "service": "pkg.Echo", "tls": true, "server_name": "api.example.com"}`, nil},
		{"grpc bad fields", `{"type": "grpc", "service": "a\u0001b", "server_name": "a..b"}`, []string{"port", "server_name", "service"}},
		{"icmp", `{"type": "icmp", "count": 5, "max_loss": 20}`, nil},
		{"icmp bad fields", `{"type": "icmp", "count": 21, "max_loss": 100}`, []string{"count", "max_loss"}},
		{"feed", `{"type": "feed", "ttl": 120, "pool_label": "service", "origin_label": "instance"}`, nil},
		{"feed with defaults", `{"type": "feed"}`, nil},
		{"feed bad fields", `{"type": "feed", "ttl": 604801, "pool_label": "1x", "origin_label": "a-b"}`, []string{"origin_label", "pool_label", "ttl"}},
		{"unknown type", `{"type": "ftp"}`, []string{"type"}},
	}
	for _, c := range cases {
		err := decode[Monitor](t, c.json).Validate(nil)
		if c.want == nil {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if got := paths(t, err); !slices.Equal(got, c.want) {
			t.Errorf("%s: errors at %v, want %v (%v)", c.name, got, c.want, err)
		}
	}
}

func TestPayload(t *testing.T) {
	for _, c := range []struct{ s, enc, want string }{
		{"PING", "", "PING"}, {"PING", PayloadText, "PING"}, {"50 49 4E 47", PayloadHex, "PING"}, {"", PayloadHex, ""},
	} {
		got, err := Payload(c.s, c.enc)
		if err != nil || !bytes.Equal(got, []byte(c.want)) {
			t.Errorf("Payload(%q, %q) = %q, %v; want %q", c.s, c.enc, got, err, c.want)
		}
	}
}
