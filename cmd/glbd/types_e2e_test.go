package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestServiceTypesParse: SRV, SVCB and HTTPS records, stored through the
// API and through a DNS UPDATE, are answered in a form dig and kdig parse
// into those types with the content given.
func TestServiceTypesParse(t *testing.T) {
	g := startParallel(t)
	zone := g.must("POST", "/api/v1/zones", map[string]any{
		"name": "glb.example.com", "nameservers": []string{"ns1.glb.example.com"},
		"records": []map[string]any{
			{"name": "_sip._tcp.glb.example.com", "type": "SRV", "content": "10 5 5060 sip.glb.example.com."},
			{"name": "svc.glb.example.com", "type": "SVCB", "content": "1 svc2.example.net. port=8053 alpn=dot"},
			{"name": "web.glb.example.com", "type": "HTTPS", "content": "1 . alpn=h2,h3 ipv4hint=192.0.2.1 ipv6hint=2001:db8::1"},
		},
	})
	secret := tsigKey(t, g, "ops", map[string]any{"zone": zone["id"], "name": "glb.example.com", "match": "subtree", "types": []string{"HTTPS"}})
	if out, err := nsupdate(t, g, "ops", secret, "zone glb.example.com\nupdate add upd.glb.example.com 60 HTTPS 1 . alpn=h3 port=8443"); err != nil {
		t.Fatalf("nsupdate HTTPS: %v\n%s", err, out)
	}
	want := []struct{ name, qtype, data string }{
		{"_sip._tcp.glb.example.com", "SRV", "10 5 5060 sip.glb.example.com."},
		{"svc.glb.example.com", "SVCB", `1 svc2.example.net. alpn="dot" port=8053`},
		{"web.glb.example.com", "HTTPS", `1 . alpn="h2,h3" ipv4hint=192.0.2.1 ipv6hint=2001:db8::1`},
		{"upd.glb.example.com", "HTTPS", `1 . alpn="h3" port=8443`},
	}
	host, port := splitHostPort(t, g.dns)
	for _, w := range want {
		eventually(t, time.Second, w.name+" served", func() (bool, string) {
			out, _ := exec.Command("dig", "@"+host, "-p", port, "+norec", "+noall", "+answer", w.name, w.qtype).CombinedOutput()
			return strings.Contains(string(out), "\t"+w.qtype+"\t"+w.data), string(out)
		})
		if _, err := exec.LookPath("kdig"); err != nil {
			continue
		}
		out, err := exec.Command("kdig", "@"+host, "-p", port, "+norec", "+noall", "+answer", w.name, w.qtype).CombinedOutput()
		if err != nil || strings.Contains(string(out), "WARNING") || !strings.Contains(string(out), w.qtype) {
			t.Errorf("kdig %s %s: %v\n%s", w.name, w.qtype, err, out)
		}
	}
}
