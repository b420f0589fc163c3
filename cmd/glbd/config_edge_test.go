package main

import (
	"io"
	"strings"
	"testing"

	"github.com/glb-dns/glb/dnsserver"
)

func TestConfigEdgeFlags(t *testing.T) {
	t.Parallel()
	c, err := parseConfig("glbd", []string{"--node", "n1"}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.UDPSockets != 0 {
		t.Errorf("default --udp-sockets %d, want 0 (two per CPU)", c.UDPSockets)
	}
	if c.NSID != "n1" || c.VersionString != "" || c.RRL != (dnsserver.RRLConfig{Slip: 2, IPv4Prefix: 24, IPv6Prefix: 56}) {
		t.Errorf("defaults: NSID %q version %q RRL %+v", c.NSID, c.VersionString, c.RRL)
	}
	c, err = parseConfig("glbd", []string{"--nsid=", "--rrl-rate", "50", "--dns-listen", "0.0.0.0:53, [::]:53"}, env(map[string]string{
		"GLB_UDP_SOCKETS": "3", "GLB_RRL_SLIP": "1", "GLB_RRL_IPV4_PREFIX": "22", "GLB_RRL_IPV6_PREFIX": "48", "GLB_RRL_RATE": "7", "GLB_VERSION_STRING": "v1",
	}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.NSID != "" || c.VersionString != "v1" || c.RRL != (dnsserver.RRLConfig{Rate: 50, Slip: 1, IPv4Prefix: 22, IPv6Prefix: 48}) {
		t.Errorf("flags over env: NSID %q version %q RRL %+v", c.NSID, c.VersionString, c.RRL)
	}
	if c.UDPSockets != 3 {
		t.Errorf("GLB_UDP_SOCKETS=3 gave %d sockets", c.UDPSockets)
	}
	if got := commaList(c.DNSListen); len(got) != 2 || got[1] != "[::]:53" {
		t.Errorf("listen addresses %q", got)
	}
	if c, err := parseConfig("glbd", nil, env(map[string]string{"GLB_NSID": "edge-7"}), io.Discard); err != nil || c.NSID != "edge-7" {
		t.Errorf("GLB_NSID: %q, %v", c.NSID, err)
	}

	_, err = parseConfig("glbd", []string{"--dns-listen", "127.0.0.1:53,nonsense,127.0.0.1:53", "--rrl-rate", "-1", "--udp-sockets", "-1",
		"--rrl-slip", "300", "--rrl-ipv4-prefix", "33", "--rrl-ipv6-prefix", "0"}, env(nil), io.Discard)
	for _, want := range []string{`--dns-listen "nonsense"`, "127.0.0.1:53 given twice", "--rrl-rate -1", "--udp-sockets -1", "--rrl-slip 300", "--rrl-ipv4-prefix 33", "--rrl-ipv6-prefix 0"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %s", err, want)
		}
	}
}
