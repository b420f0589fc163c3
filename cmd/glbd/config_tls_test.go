package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestConfigTLS: beyond loopback the API needs TLS or an explicit
// --api-insecure-http; the certificate and key come together.
func TestConfigTLS(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		args []string
		env  map[string]string
		want string // "" accepts
	}{
		{"plain beyond loopback", []string{"--api-listen", "0.0.0.0:8443", "--api-token", "x"}, nil, "--api-tls-cert"},
		{"plain on a LAN address", []string{"--api-listen", "192.0.2.7:8443", "--api-token", "x"}, nil, "--api-insecure-http"},
		{"insecure said explicitly", []string{"--api-listen", "0.0.0.0:8443", "--api-token", "x", "--api-insecure-http"}, nil, ""},
		{"insecure from the environment", []string{"--api-listen", "0.0.0.0:8443", "--api-token", "x"}, map[string]string{"GLB_API_INSECURE_HTTP": "true"}, ""},
		{"tls beyond loopback", []string{"--api-listen", "0.0.0.0:8443", "--api-token", "x", "--api-tls-cert", "c.pem", "--api-tls-key", "k.pem"}, nil, ""},
		{"cert without key", []string{"--api-tls-cert", "c.pem"}, nil, "give both"},
		{"plain on loopback", nil, nil, ""},
		{"bad retention", []string{"--audit-retention", "forever"}, nil, "--audit-retention"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseConfig("glbd", c.args, env(c.env), io.Discard)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want an error naming %s", err, c.want)
			}
		})
	}
	cfg, err := parseConfig("glbd", nil, env(nil), io.Discard)
	if err != nil || cfg.AuditRetention != 90*24*time.Hour {
		t.Errorf("default retention %v (%v), want 90 days", cfg.AuditRetention, err)
	}
	cfg, err = parseConfig("glbd", []string{"--audit-retention", "36h"}, env(nil), io.Discard)
	if err != nil || cfg.AuditRetention != 36*time.Hour {
		t.Errorf("retention 36h: %v (%v)", cfg.AuditRetention, err)
	}
}
