package main

import (
	"encoding/base64"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// digSigned runs dig -y with the key against g and returns its output.
func digSigned(t *testing.T, g *glbd, key, secret string, args ...string) string {
	t.Helper()
	host, port := splitHostPort(t, g.dns)
	full := append([]string{"@" + host, "-p", port, "+norec", "+time=5", "+tries=1", "-y", "hmac-sha256:" + key + ":" + secret}, args...)
	out, err := exec.Command("dig", full...).CombinedOutput()
	if err != nil {
		t.Fatalf("dig %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestSignedQueriesAnsweredSigned: a query signed with a TSIG key is
// answered signed (RFC 8945 §5.3): dig -y, over UDP and TCP, for the
// SOA, a static record and a load-balanced name, finds a TSIG in the
// answer that it validates, and no warning. Stock nsupdate without a
// zone line, which finds the zone with a signed SOA query, adds a record
// and deletes it.
func TestSignedQueriesAnsweredSigned(t *testing.T) {
	g := startParallel(t)
	zoneID := configuredZone(t, g)
	secret := tsigKey(t, g, "ops", map[string]any{"zone": zoneID, "name": "glb.example.com", "match": "subtree", "types": []string{"TXT"}})

	for _, q := range [][]string{
		{"glb.example.com", "SOA"},
		{"ns1.glb.example.com", "A"},
		{"www.glb.example.com", "A"},
		{"absent.glb.example.com", "A"},
		{"glb.example.com", "SOA", "+tcp"},
		{"www.glb.example.com", "A", "+tcp"},
	} {
		out := digSigned(t, g, "ops", secret, q...)
		if strings.Contains(out, "TSIG could not be validated") || strings.Contains(out, "tsig") && strings.Contains(out, "failure") {
			t.Errorf("dig -y %v warns:\n%s", q, out)
		}
		if !strings.Contains(out, ";; TSIG PSEUDOSECTION:") || !strings.Contains(out, "ops.") {
			t.Errorf("dig -y %v: no TSIG in the answer:\n%s", q, out)
		}
		if !strings.Contains(out, "status: NOERROR") && !strings.Contains(out, "status: NXDOMAIN") {
			t.Errorf("dig -y %v:\n%s", q, out)
		}
	}

	if _, err := exec.LookPath("nsupdate"); err != nil {
		t.Fatal("this test needs nsupdate (Debian/Ubuntu: apt-get install bind9-dnsutils)")
	}
	name := "nozone.glb.example.com"
	if out, err := nsupdate(t, g, "ops", secret, "update add "+name+" 60 TXT \"found-the-zone\""); err != nil || out != "" {
		t.Fatalf("nsupdate add without a zone line: %v\n%s", err, out)
	}
	eventually(t, 5*time.Second, "the record added", func() (bool, string) {
		got, status := dig(t, g.dns, name, "TXT")
		return len(got) == 1 && got[0] == `"found-the-zone"`, status
	})
	if out, err := nsupdate(t, g, "ops", secret, "update delete "+name+" TXT"); err != nil || out != "" {
		t.Fatalf("nsupdate delete without a zone line: %v\n%s", err, out)
	}
	eventually(t, 5*time.Second, "the record deleted", func() (bool, string) {
		_, status := dig(t, g.dns, name, "TXT")
		return status == "NXDOMAIN", status
	})
}

// TestSignedQueryRefusals: a query signed with an unknown key or a wrong
// secret is answered NOTAUTH with BADKEY or BADSIG in an unsigned TSIG
// whose Time Signed is the server's clock (RFC 8945 §5.3.2), not 0; one
// signed 10 minutes ago is answered BADTIME, signed with the key; an
// unsigned query is answered as ever, with no TSIG.
func TestSignedQueryRefusals(t *testing.T) {
	g := startParallel(t)
	zoneID := configuredZone(t, g)
	secret := tsigKey(t, g, "ops", map[string]any{"zone": zoneID, "name": "glb.example.com", "match": "subtree", "types": []string{"TXT"}})
	wrong := base64.StdEncoding.EncodeToString(make([]byte, 32))
	for i, c := range []struct {
		name        string
		key, secret string
		at          time.Time
		tsig        uint16
	}{
		{"BADKEY", "nokey", secret, time.Now(), dns.RcodeBadKey},
		{"BADSIG", "ops", wrong, time.Now(), dns.RcodeBadSig},
		{"BADTIME", "ops", secret, time.Now().Add(-10 * time.Minute), dns.RcodeBadTime},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := new(dns.Msg)
			m.SetQuestion("glb.example.com.", dns.TypeSOA)
			r, raw, mac := sendUpdate(t, g.dns, m, c.key, c.secret, c.at, i%2 == 1)
			_ = raw
			ts := r.IsTsig()
			if r.Rcode != dns.RcodeNotAuth || ts == nil || ts.Error != c.tsig {
				t.Fatalf("rcode %s, TSIG %v; want NOTAUTH, %s", dns.RcodeToString[r.Rcode], ts, dns.RcodeToString[int(c.tsig)])
			}
			if len(r.Question) != 1 || r.Question[0].Name != "glb.example.com." {
				t.Fatalf("question %v", r.Question)
			}
			switch c.tsig {
			case dns.RcodeBadTime:
				if err := verifyReplyMAC(r, c.secret, mac); err != nil {
					t.Fatalf("BADTIME answer: %v", err)
				}
			default:
				if ts.MACSize != 0 {
					t.Fatal("a BADKEY/BADSIG answer is signed (RFC 8945 §5.3.2: it must not be)")
				}
				if d := time.Since(time.Unix(int64(ts.TimeSigned), 0)); d < -5*time.Second || d > 5*time.Second {
					t.Fatalf("Time Signed %d is not the server's clock (off by %v)", ts.TimeSigned, d)
				}
			}
		})
	}
	m := new(dns.Msg)
	m.SetQuestion("glb.example.com.", dns.TypeSOA)
	r, _, _ := sendUpdate(t, g.dns, m, "", "", time.Time{}, false)
	if r.Rcode != dns.RcodeSuccess || r.IsTsig() != nil || len(r.Answer) != 1 {
		t.Fatalf("unsigned query: %v", r)
	}
}
