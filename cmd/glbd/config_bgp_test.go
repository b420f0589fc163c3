package main

import (
	"io"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestBGPConfig(t *testing.T) {
	t.Parallel()
	c, err := parseConfig("glbd", []string{"--bgp-asn", "65001", "--bgp-peer", "[2001:db8::1]:1179,65000,secret",
		"--anycast", "192.0.2.53", "--anycast", "2001:db8:53::/48", "--bgp-community", "65001:53", "--bgp-med", "10"},
		env(map[string]string{"GLB_BGP_ROUTER_ID": "192.0.2.1", "GLB_BGP_PEER": "198.51.100.1,65000 198.51.100.2,65002",
			"GLB_MAX_STALE": "5m"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s := c.BGP.speaker
	if s.ASN != 65001 || s.RouterID != netip.MustParseAddr("192.0.2.1") || c.BGP.MaxStale != 5*time.Minute || s.HoldTime != 90*time.Second {
		t.Errorf("speaker %+v, max stale %v", s, c.BGP.MaxStale)
	}
	// The flag replaces the environment's peers.
	if len(s.Peers) != 1 || s.Peers[0].Addr != netip.MustParseAddr("2001:db8::1") || s.Peers[0].Port != 1179 ||
		s.Peers[0].ASN != 65000 || s.Peers[0].Password != "secret" {
		t.Errorf("peers %+v", s.Peers)
	}
	if len(s.Prefixes) != 2 || s.Prefixes[0] != netip.MustParsePrefix("192.0.2.53/32") || s.Prefixes[1] != netip.MustParsePrefix("2001:db8:53::/48") {
		t.Errorf("prefixes %v", s.Prefixes)
	}
	if len(s.Communities) != 1 || s.Communities[0] != 65001<<16|53 || s.MED == nil || *s.MED != 10 {
		t.Errorf("communities %v, med %v", s.Communities, s.MED)
	}
	c, err = parseConfig("glbd", nil, env(map[string]string{"GLB_BGP_ASN": "65001", "GLB_BGP_ROUTER_ID": "192.0.2.1",
		"GLB_BGP_PEER": "198.51.100.1,65000 198.51.100.2,65002", "GLB_ANYCAST": "192.0.2.53/32"}), io.Discard)
	if err != nil || len(c.BGP.speaker.Peers) != 2 || c.BGP.speaker.Peers[1].ASN != 65002 {
		t.Fatalf("peers from the environment: %v %+v", err, c)
	}

	base := []string{"--bgp-asn", "65001", "--bgp-router-id", "192.0.2.1", "--bgp-peer", "198.51.100.1,65000", "--anycast", "192.0.2.53"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--anycast", "192.0.2.53"}, "--bgp-peer and --anycast need --bgp-asn"},
		{[]string{"--bgp-asn", "65001", "--bgp-peer", "198.51.100.1,65000", "--anycast", "192.0.2.53"}, "--bgp-router-id"},
		{[]string{"--bgp-asn", "65001", "--bgp-router-id", "192.0.2.1", "--anycast", "192.0.2.53"}, "--bgp-peer: at least one"},
		{[]string{"--bgp-asn", "65001", "--bgp-router-id", "192.0.2.1", "--bgp-peer", "198.51.100.1,65000"}, "--anycast: at least one"},
		{append(base, "--bgp-peer", "198.51.100.1"), `--bgp-peer "198.51.100.1"`},
		{append(base, "--bgp-peer", "peer,65000"), `--bgp-peer "peer,65000"`},
		{append(base, "--bgp-peer", "198.51.100.1,x"), `--bgp-peer "198.51.100.1,x"`},
		{append(base, "--anycast", "192.0.2.0/33"), `--anycast "192.0.2.0/33"`},
		{append(base, "--bgp-community", "65001"), `--bgp-community "65001"`},
		{append(base, "--bgp-community", "70000:1"), `--bgp-community "70000:1"`},
		{append(base, "--bgp-med", "-1"), `--bgp-med "-1"`},
		{append(base, "--bgp-hold-time", "2s"), "--bgp-hold-time 2s"},
		{append(base, "--max-stale", "-1s"), "--max-stale -1s"},
		{append(base, "--bgp-listen-port", "70000"), "--bgp-listen-port 70000"},
	} {
		_, err := parseConfig("glbd", tc.args, env(nil), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error naming %s", tc.args, err, tc.want)
		}
	}
}
