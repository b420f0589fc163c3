package dnsserver

import (
	"testing"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/pools"
)

// TestServiceRecordTypes: SRV, SVCB and HTTPS records are validated by
// pools exactly as far as the compile needs: what validation accepts
// compiles and is answered, parsed back by miekg/dns into its type; what
// it refuses names the content.
func TestServiceRecordTypes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		typ, content string
		ok           bool
	}{
		{"SRV", "10 5 5060 sip.glb.example.com.", true},
		{"SRV", "0 0 0 .", true},
		{"SRV", "10 5 70000 sip.example.com.", false},
		{"SRV", "10 5 sip.example.com.", false},
		{"HTTPS", "1 . alpn=h2,h3 port=8443 ipv4hint=192.0.2.1,192.0.2.2 ipv6hint=2001:db8::1", true},
		{"HTTPS", `1 . alpn="h2,h3" port="8443"`, true},
		{"HTTPS", "0 cdn.example.net.", true},
		{"HTTPS", "1 . mandatory=alpn alpn=h2 no-default-alpn", true},
		{"SVCB", "2 svc.example.net. port=53 key65000=abc", true},
		{"HTTPS", "0 cdn.example.net. alpn=h2", false},
		{"HTTPS", "1 . ipv4hint=2001:db8::1", false},
		{"HTTPS", "1 . port=http", false},
		{"HTTPS", "1 . alpn=h2 alpn=h3", false},
		{"HTTPS", "1 . bogus=1", false},
		{"SVCB", "1", false},
		{"HTTPS", "1 . no-default-alpn=x", false},
		// RFC 9460 §8 and §7.1.1 on the parameters together.
		{"HTTPS", "1 . mandatory=port,alpn alpn=h2 port=443", true},
		{"SVCB", "1 svc.example.net. mandatory=key65000 key65000=abc", true},
		{"HTTPS", "1 . mandatory=alpn port=1", false},
		{"HTTPS", "1 . mandatory=alpn,alpn alpn=h2", false},
		{"HTTPS", "1 . mandatory=mandatory alpn=h2", false},
		{"HTTPS", "1 . no-default-alpn", false},
		{"SVCB", "1 svc.example.net. no-default-alpn port=53", false},
		{"HTTPS", "1 . key1=h2", false},
		{"HTTPS", "1 . alpn=h2 key1=h3", false},
		{"SVCB", "1 svc.example.net. key065000=abc", false},
	}
	for _, c := range cases {
		z := pools.DefaultZone()
		z.ID, z.Name, z.Nameservers = "z", "glb.example.com", []string{"ns1.glb.example.com"}
		z.Records = []pools.Record{{Name: "svc.glb.example.com", Type: c.typ, Content: c.content}}
		err := z.Validate(nil)
		if (err == nil) != c.ok {
			t.Errorf("%s %q: validation %v, want ok=%v", c.typ, c.content, err, c.ok)
			continue
		}
		if !c.ok {
			continue
		}
		cz, err := compileZone(&z, nil)
		if err != nil {
			t.Errorf("%s %q: accepted but does not compile: %v", c.typ, c.content, err)
			continue
		}
		cfg := testConfig()
		cfg.Zones[0].Records = append(cfg.Zones[0].Records, z.Records...)
		s := newTestServer(t, nil)
		s.Publish(compileTest(t, cfg))
		typ := dns.StringToType[c.typ]
		_, r := exchangeProc(t, s, &tcase{qname: "svc.glb.example.com.", qtype: typ, edns: true})
		if r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 || r.Answer[0].Header().Rrtype != typ {
			t.Errorf("%s %q: answer %v", c.typ, c.content, r)
		}
		_ = cz
	}
}
