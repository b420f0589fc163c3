package storetest

import (
	"context"
	"testing"

	"github.com/glb-dns/glb/pools"
)

// testMonitorTypes: a monitor of each type beyond http reads back as
// written, with the fields of its type.
func testMonitorTypes(t *testing.T, c context.Context, s pools.Store) {
	udp := Monitor()
	udp.Type, udp.Port, udp.Send, udp.Expect, udp.PayloadEncoding = pools.MonitorUDP, 7, "50494e47", "504f4e47", pools.PayloadHex
	dns := Monitor()
	dns.Type, dns.QueryName, dns.QueryType, dns.Protocol = pools.MonitorDNS, "www.example.com", "AAAA", pools.DNSOverTCP
	dns.ExpectedRcode, dns.ExpectedAnswer = "NOERROR", "2001:db8::1"
	tls := Monitor()
	tls.Type, tls.ServerName, tls.MinDaysValid, tls.AllowInsecure = pools.MonitorTLS, "www.example.com", 14, true
	smtp := Monitor()
	smtp.Type, smtp.Port, smtp.StartTLS, smtp.ServerName = pools.MonitorSMTP, 587, true, "mx.example.com"
	for _, m := range []*pools.Monitor{udp, dns, tls, smtp} {
		created := mustCreate(t, s, m)
		got, err := s.Get(c, pools.KindMonitor, created.ID)
		if err != nil {
			t.Fatal(err)
		}
		sameObject(t, string(m.Type)+" monitor", got, created)
		if g := got.(*pools.Monitor); g.Type != m.Type || g.Send != m.Send || g.QueryName != m.QueryName || g.MinDaysValid != m.MinDaysValid || g.StartTLS != m.StartTLS {
			t.Errorf("%s monitor read back as %+v", m.Type, g)
		}
	}
}
