package outbound

import (
	"net/netip"
	"strings"
	"testing"
)

// TestCheck: the default classes are refused, every one of them, and
// public addresses pass; an allow lifts a refusal, a deny wins over it.
func TestCheck(t *testing.T) {
	t.Parallel()
	p, err := New([]string{"127.0.0.2", "10.20.0.0/16", "hooks.corp.example", "fd12:3456::/32"},
		[]string{"203.0.113.0/24", "10.20.30.40", "evil.example."})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		host, addr string
		rule       string // "" = allowed
	}{
		{"", "192.0.2.1", ""},
		{"", "2001:db8::1", ""},
		{"", "8.8.8.8", ""},
		{"", "127.0.0.1", "loopback 127.0.0.0/8"},
		{"", "127.255.255.254", "loopback 127.0.0.0/8"},
		{"", "::1", "loopback ::1/128"},
		{"", "::ffff:127.0.0.1", "loopback 127.0.0.0/8"},
		{"", "64:ff9b::a9fe:a9fe", "link-local 169.254.0.0/16"},
		{"", "169.254.169.254", "link-local 169.254.0.0/16"},
		{"", "fd00:ec2::254", "link-local fd00:ec2::254/128"},
		{"", "fe80::1", "link-local fe80::/10"},
		{"", "10.0.0.1", "private 10.0.0.0/8"},
		{"", "172.16.0.1", "private 172.16.0.0/12"},
		{"", "172.31.255.255", "private 172.16.0.0/12"},
		{"", "172.32.0.1", ""},
		{"", "192.168.1.1", "private 192.168.0.0/16"},
		{"", "fd00::1", "private fc00::/7"},
		{"", "fc00::1", "private fc00::/7"},
		{"", "100.64.0.1", "shared 100.64.0.0/10"},
		{"", "100.127.255.255", "shared 100.64.0.0/10"},
		{"", "100.128.0.1", ""},
		{"", "224.0.0.1", "multicast 224.0.0.0/4"},
		{"", "ff02::1", "multicast ff00::/8"},
		{"", "0.0.0.0", "unspecified 0.0.0.0/8"},
		{"", "::", "unspecified ::/128"},
		{"", "255.255.255.255", "broadcast 255.255.255.255/32"},
		// Allowed by an entry: an address, a network, a name.
		{"", "127.0.0.2", ""},
		{"", "::ffff:127.0.0.2", ""},
		{"", "10.20.1.1", ""},
		{"", "fd12:3456::9", ""},
		{"hooks.corp.example", "10.9.9.9", ""},
		{"HOOKS.corp.example.", "10.9.9.9", ""},
		{"other.corp.example", "10.9.9.9", "private 10.0.0.0/8"},
		// A deny wins, by address or by name, over an allow or a public
		// address.
		{"", "203.0.113.7", "--outbound-deny 203.0.113.0/24"},
		{"", "10.20.30.40", "--outbound-deny 10.20.30.40"},
		{"evil.example", "192.0.2.1", "--outbound-deny evil.example."},
	} {
		err := p.Check(c.host, netip.MustParseAddr(c.addr))
		if c.rule == "" {
			if err != nil {
				t.Errorf("%s %s: %v, want allowed", c.host, c.addr, err)
			}
			continue
		}
		re := Refusal(err)
		if re == nil || re.Rule != c.rule {
			t.Errorf("%s %s: %v, want refused by %s", c.host, c.addr, err, c.rule)
		}
	}
}

// TestCheckZeroPolicy: no entries (and a nil policy) is the default.
func TestCheckZeroPolicy(t *testing.T) {
	t.Parallel()
	var p *Policy
	if err := p.Check("", netip.MustParseAddr("169.254.169.254")); Refusal(err) == nil || !Refusal(err).Default {
		t.Fatalf("nil policy: %v", err)
	}
	if err := p.Check("", netip.MustParseAddr("192.0.2.1")); err != nil {
		t.Fatal(err)
	}
	if err := p.Check("", netip.Addr{}); err == nil {
		t.Fatal("no address allowed")
	}
}

// TestNewRefusesBadEntries: a typo is an error at start, not an entry
// that matches nothing.
func TestNewRefusesBadEntries(t *testing.T) {
	t.Parallel()
	for _, e := range []string{"10.0.0.0/33", "10.0.0/8", "hooks..example", "http://hooks.example", "a b", "-"} {
		_, err := New([]string{e}, nil)
		if err == nil || !strings.Contains(err.Error(), "--outbound-allow") || !strings.Contains(err.Error(), e) {
			t.Errorf("allow %q: %v", e, err)
		}
		if _, err := New(nil, []string{e}); err == nil || !strings.Contains(err.Error(), "--outbound-deny") {
			t.Errorf("deny %q: %v", e, err)
		}
	}
	if _, err := New([]string{"[::1]", "10.1.0.0/16", "Hooks.Example"}, nil); err != nil {
		t.Fatal(err)
	}
}

// TestRefusedErrorSaysHowToLift: the message names the address, the
// class and the flag that lifts it.
func TestRefusedErrorSaysHowToLift(t *testing.T) {
	t.Parallel()
	err := (&Policy{}).Check("meta.example", netip.MustParseAddr("169.254.169.254"))
	for _, want := range []string{"meta.example (169.254.169.254)", "link-local", "169.254.0.0/16", "--outbound-allow"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
}
