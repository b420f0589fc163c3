package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	c, err := parseConfig("glbd", nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.DNSListen != "127.0.0.1:5353" || c.APIListen != "127.0.0.1:8080" || c.DataDir != "./data" ||
		c.DatabaseURL != "" || !c.Migrate || c.Node == "" {
		t.Errorf("defaults: %+v", c)
	}
}

func TestConfigFlagsOverEnvironment(t *testing.T) {
	t.Parallel()
	c, err := parseConfig("glbd", []string{"--region", "WEU"}, env(map[string]string{
		"GLB_REGION": "ENAM", "GLB_NODE": "n1", "GLB_MIGRATE": "false", "GLB_DNS_LISTEN": "127.0.0.2:53",
	}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Region != "WEU" || c.Node != "n1" || c.Migrate || c.DNSListen != "127.0.0.2:53" {
		t.Errorf("got %+v", c)
	}
}

func TestConfigCheckConcurrency(t *testing.T) {
	t.Parallel()
	c, err := parseConfig("glbd", nil, env(map[string]string{"GLB_CHECK_CONCURRENCY": "500"}), io.Discard)
	if err != nil || c.CheckConcurrency != 500 {
		t.Errorf("from the environment: %v, %+v", err, c)
	}
	c, err = parseConfig("glbd", []string{"--check-concurrency", "9"}, env(map[string]string{"GLB_CHECK_CONCURRENCY": "500"}), io.Discard)
	if err != nil || c.CheckConcurrency != 9 {
		t.Errorf("flag over the environment: %v, %+v", err, c)
	}
	if _, err := parseConfig("glbd", []string{"--check-concurrency", "-1"}, env(nil), io.Discard); err == nil ||
		!strings.Contains(err.Error(), "--check-concurrency") {
		t.Errorf("a negative bound: %v", err)
	}
	if _, err := parseConfig("glbd", nil, env(map[string]string{"GLB_CHECK_CONCURRENCY": "many"}), io.Discard); err == nil ||
		!strings.Contains(err.Error(), "GLB_CHECK_CONCURRENCY") {
		t.Errorf("a bound that is not a number: %v", err)
	}
}

// TestConfigRefusesOpenAPIWithoutToken: an API beyond loopback needs a
// token, and every bad setting is reported at once.
func TestConfigRefusesOpenAPIWithoutToken(t *testing.T) {
	t.Parallel()
	_, err := parseConfig("glbd", []string{"--api-listen", "0.0.0.0:8080", "--region", "MARS", "--check-source", "x"}, env(nil), io.Discard)
	if err == nil {
		t.Fatal("accepted an API on 0.0.0.0 without a token")
	}
	for _, want := range []string{"--api-token", "--region", "--check-source"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	if _, err := parseConfig("glbd", []string{"--api-listen", "0.0.0.0:8080", "--api-token", "s3cret", "--api-insecure-http"}, env(nil), io.Discard); err != nil {
		t.Errorf("with a token: %v", err)
	}
	if _, err := parseConfig("glbd", []string{"--api-listen", "[::1]:8080"}, env(nil), io.Discard); err != nil {
		t.Errorf("IPv6 loopback without a token: %v", err)
	}
}

// TestConfigOutbound: --outbound-allow and --outbound-deny repeat and
// take comma-separated lists; the environment's list stands until a flag
// replaces it; a bad entry or resolver is an error naming the flag.
func TestConfigOutbound(t *testing.T) {
	t.Parallel()
	c, err := parseConfig("glbd", []string{"--outbound-allow", "127.0.0.2", "--outbound-allow", "10.1.0.0/16,hooks.corp.example"},
		env(map[string]string{"GLB_OUTBOUND_ALLOW": "192.168.0.0/16", "GLB_OUTBOUND_DENY": "203.0.113.0/24, evil.example"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.Outbound.Allow, " ") != "127.0.0.2 10.1.0.0/16 hooks.corp.example" ||
		strings.Join(c.Outbound.Deny, " ") != "203.0.113.0/24 evil.example" || c.Outbound.policy == nil {
		t.Errorf("allow %q, deny %q", c.Outbound.Allow, c.Outbound.Deny)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--outbound-allow", "10.0.0.0/33"}, "--outbound-allow"},
		{[]string{"--outbound-deny", "not a host"}, "--outbound-deny"},
		{[]string{"--outbound-resolver", "dns.example"}, "--outbound-resolver"},
	} {
		if _, err := parseConfig("glbd", c.args, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v", c.args, err)
		}
	}
	if _, err := parseConfig("glbd", nil, env(map[string]string{"GLB_OUTBOUND_ALLOW": "10.0.0.0/33"}), io.Discard); err == nil {
		t.Error("a bad entry from the environment is accepted")
	}
}

// The replica flags: a read URL needs the primary's, a lag must be
// positive, and both come from GLB_* as well.
func TestStoreFlags(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig("glbd", []string{"--database-url", "postgres://p/glb", "--database-read-url", "postgres://r/glb"}, env(nil), io.Discard)
	if err != nil || cfg.Store.DatabaseReadURL != "postgres://r/glb" || cfg.Store.MaxReplicaLag != 5*time.Second {
		t.Fatalf("flags: %+v, %v", cfg, err)
	}
	cfg, err = parseConfig("glbd", nil, env(map[string]string{"GLB_DATABASE_URL": "postgres://p/glb",
		"GLB_DATABASE_READ_URL": "postgres://r/glb", "GLB_MAX_REPLICA_LAG": "750ms"}), io.Discard)
	if err != nil || cfg.Store.DatabaseReadURL != "postgres://r/glb" || cfg.Store.MaxReplicaLag != 750*time.Millisecond {
		t.Fatalf("environment: %+v, %v", cfg, err)
	}
	for args, want := range map[string]string{
		"--database-read-url postgres://r/glb":                   "--database-read-url needs --database-url",
		"--database-url postgres://p/glb --max-replica-lag 0s":   "--max-replica-lag 0s",
		"--database-url postgres://p/glb --max-replica-lag soon": "max-replica-lag",
	} {
		_, err := parseConfig("glbd", strings.Fields(args), env(nil), io.Discard)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %q", args, err, want)
		}
	}
}
