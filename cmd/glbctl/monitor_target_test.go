package main

import (
	"testing"

	"github.com/glb-dns/glb/pools"
)

// glbctl get monitors says what each type asks and expects.
func TestMonitorTarget(t *testing.T) {
	cases := []struct {
		m              pools.Monitor
		target, expect string
	}{
		{pools.Monitor{Type: pools.MonitorHTTP, Method: "GET", Path: "/health", ExpectedCodes: "2xx"}, "GET /health", "2xx"},
		{pools.Monitor{Type: pools.MonitorTCP, Method: "GET", Path: "/"}, "", ""},
		{pools.Monitor{Type: pools.MonitorUDP, Send: "PING", Expect: "PONG"}, `"PING"`, `"PONG"`},
		{pools.Monitor{Type: pools.MonitorUDP, Send: "5049", PayloadEncoding: "hex"}, `hex "5049"`, `""`},
		{pools.Monitor{Type: pools.MonitorDNS, QueryName: "www.example.com", QueryType: "A"}, "www.example.com A over udp", "NOERROR"},
		{pools.Monitor{Type: pools.MonitorDNS, QueryName: "x.example", QueryType: "TXT", Protocol: "tcp", ExpectedRcode: "NXDOMAIN", ExpectedAnswer: "v"},
			"x.example TXT over tcp", "NXDOMAIN v"},
		{pools.Monitor{Type: pools.MonitorSMTP, StartTLS: true, ServerName: "mx.example.com"}, "STARTTLS mx.example.com", "220, EHLO"},
		{pools.Monitor{Type: pools.MonitorTLS, ServerName: "www.example.com", MinDaysValid: 14}, "www.example.com", "valid 14+ days"},
		{pools.Monitor{Type: pools.MonitorGRPC, Service: "shop.Cart"}, `Health/Check "shop.Cart"`, "SERVING"},
		{pools.Monitor{Type: pools.MonitorGRPC, TLS: true, ServerName: "cart.example.com"}, `Health/Check "" over TLS cart.example.com`, "SERVING"},
		{pools.Monitor{Type: pools.MonitorICMP, MaxLoss: 20}, "3 echo requests", "loss <= 20%"},
		{pools.Monitor{Type: pools.MonitorFeed, TTL: 60}, "fed in", "ttl 60 s"},
	}
	for _, c := range cases {
		if target, expect := monitorTarget(&c.m); target != c.target || expect != c.expect {
			t.Errorf("%s: target %q expect %q, want %q %q", c.m.Type, target, expect, c.target, c.expect)
		}
	}
}
