package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// configuredZone configures g (configure) and returns the id of its one
// zone, glb.example.com.
func configuredZone(t *testing.T, g *glbd) string {
	t.Helper()
	configure(t, g)
	var list struct {
		Result []map[string]any `json:"result"`
	}
	g.call("GET", "/api/v1/zones", nil, &list)
	return list.Result[0]["id"].(string)
}

// acmeKey creates the TSIG key "acme", which may change the TXT records
// of _acme-challenge.www.glb.example.com in zoneID only, and returns its
// secret.
func acmeKey(t *testing.T, g *glbd, zoneID string) string {
	t.Helper()
	return tsigKey(t, g, "acme", map[string]any{"zone": zoneID, "name": "www.glb.example.com", "match": "acme-challenge", "types": []string{"TXT"}})
}

// tsigKey creates a TSIG key through g's API and returns its secret.
func tsigKey(t *testing.T, g *glbd, name string, grants ...map[string]any) string {
	t.Helper()
	k := g.must("POST", "/api/v1/tsig_keys", map[string]any{"name": name, "algorithm": "hmac-sha256", "grants": grants})
	s, _ := k["secret"].(string)
	if s == "" {
		t.Fatalf("no secret in %v", k)
	}
	return s
}

// nsupdate runs BIND's nsupdate against g with the key on its command
// line, as an operator would, and returns its output.
func nsupdate(t *testing.T, g *glbd, key, secret string, script string) (string, error) {
	t.Helper()
	host, port := splitHostPort(t, g.dns)
	cmd := exec.Command("nsupdate", "-y", "hmac-sha256:"+key+":"+secret, "-t", "5")
	cmd.Stdin = strings.NewReader("server " + host + " " + port + "\n" + script + "\nsend\n")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// zoneState is what the store holds of a zone: its revision and records.
func zoneState(t *testing.T, g *glbd, id string) string {
	t.Helper()
	z := g.must("GET", "/api/v1/zones/"+id, nil)
	b, _ := json.Marshal([]any{z["revision"], z["serial"], z["records"]})
	return string(b)
}

// auditBy returns the audit entries whose actor is actor.
func auditBy(t *testing.T, g *glbd, actor string) []map[string]any {
	t.Helper()
	var out struct {
		Result []map[string]any `json:"result"`
	}
	if code := g.call("GET", "/api/v1/audit?actor="+actor, nil, &out); code != 200 {
		t.Fatalf("audit: %d", code)
	}
	return out.Result
}

// TestUpdateNsupdateTwoNodes: nsupdate, signed with a key granted only
// _acme-challenge TXT under www, adds a TXT through node a; node b, on the
// same PostgreSQL, answers it within a second; the audit log names the
// key; a delete takes it away the same way.
func TestUpdateNsupdateTwoNodes(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("nsupdate"); err != nil {
		t.Skip("nsupdate not installed (bind9-dnsutils)")
	}
	a, b := startTwoNodes(t)
	zoneID := configuredZone(t, a)
	secret := acmeKey(t, a, zoneID)

	name := "_acme-challenge.www.glb.example.com"
	if out, err := nsupdate(t, a, "acme", secret, "zone glb.example.com\nupdate add "+name+" 60 TXT \"token-one\""); err != nil {
		t.Fatalf("nsupdate add: %v\n%s", err, out)
	}
	took := eventually(t, time.Second, "TXT added on a, seen on b", func() (bool, string) {
		got, status := dig(t, b.dns, name, "TXT")
		return status == "NOERROR" && len(got) == 1 && got[0] == `"token-one"`, status + " " + strings.Join(got, ",")
	})
	t.Logf("nsupdate add on a: answered by b %v after nsupdate returned", took.Round(time.Millisecond))
	es := auditBy(t, a, "tsig:acme")
	if len(es) != 1 || es[0]["kind"] != "zones" || es[0]["method"] != "UPDATE" || es[0]["object_id"] != zoneID {
		t.Fatalf("audit of the update: %v", es)
	}

	if out, err := nsupdate(t, a, "acme", secret, "zone glb.example.com\nupdate delete "+name+" TXT"); err != nil {
		t.Fatalf("nsupdate delete: %v\n%s", err, out)
	}
	took = eventually(t, time.Second, "TXT deleted on a, gone on b", func() (bool, string) {
		got, status := dig(t, b.dns, name, "TXT")
		return status == "NXDOMAIN", status + " " + strings.Join(got, ",")
	})
	t.Logf("nsupdate delete on a: gone from b %v after nsupdate returned", took.Round(time.Millisecond))

	// Outside the grant: nsupdate reports REFUSED and nothing changes.
	before := zoneState(t, a, zoneID)
	out, err := nsupdate(t, a, "acme", secret, "zone glb.example.com\nupdate add other.glb.example.com 60 TXT \"x\"")
	if err == nil || !strings.Contains(out, "REFUSED") {
		t.Fatalf("out of grant: %v\n%s", err, out)
	}
	if after := zoneState(t, a, zoneID); after != before {
		t.Fatalf("a refused update changed the zone:\n%s\n%s", before, after)
	}
}

// sendUpdate signs m with (key, secret) as of at (zero: unsigned) and
// sends it over UDP or TCP; it returns the reply, its raw bytes and the
// request's MAC.
func sendUpdate(t *testing.T, server string, m *dns.Msg, key, secret string, at time.Time, tcp bool) (*dns.Msg, []byte, string) {
	t.Helper()
	var raw []byte
	var mac string
	var err error
	if key != "" {
		m.SetTsig(dns.Fqdn(key), dns.HmacSHA256, 300, at.Unix())
		raw, mac, err = dns.TsigGenerate(m, secret, "", false)
	} else {
		raw, err = m.Pack()
	}
	if err != nil {
		t.Fatal(err)
	}
	buf := exchangeRaw(t, server, raw, tcp)
	r := new(dns.Msg)
	if err := r.Unpack(buf); err != nil {
		t.Fatalf("reply: %v", err)
	}
	return r, buf, mac
}

// exchangeRaw sends the message raw to server as it is, over UDP or TCP
// (framed), and returns the reply's bytes.
func exchangeRaw(t *testing.T, server string, raw []byte, tcp bool) []byte {
	t.Helper()
	network := "udp"
	if tcp {
		network = "tcp"
		raw = append(binary.BigEndian.AppendUint16(nil, uint16(len(raw))), raw...)
	}
	c, err := net.Dial(network, server)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(raw); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 65535)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	buf = buf[:n]
	if tcp {
		buf = buf[2:]
	}
	return buf
}

func updateMsg(zone string) *dns.Msg {
	m := new(dns.Msg)
	m.SetUpdate(dns.Fqdn(zone))
	return m
}

func mustRR(t *testing.T, s string) dns.RR {
	t.Helper()
	rr, err := dns.NewRR(s)
	if err != nil {
		t.Fatal(err)
	}
	return rr
}

// ede returns the Extended DNS Error of r, if any.
func ede(r *dns.Msg) *dns.EDNS0_EDE {
	if o := r.IsEdns0(); o != nil {
		for _, e := range o.Option {
			if x, ok := e.(*dns.EDNS0_EDE); ok {
				return x
			}
		}
	}
	return nil
}

// TestUpdateRefusalsChangeNothing: every way an UPDATE can fail — the
// TSIG errors of RFC 8945, each prerequisite of RFC 2136 §2.4, glb's
// policy (unsigned, outside the grant, a load-balanced name, the apex)
// — answers the RFC's rcode (and TSIG error, and an Extended DNS Error
// where glb refuses) and leaves the zone in the store as it was.
func TestUpdateRefusalsChangeNothing(t *testing.T) {
	g := startParallel(t)
	zoneID := configuredZone(t, g)
	secret := tsigKey(t, g, "ops",
		map[string]any{"zone": zoneID, "name": "glb.example.com", "match": "subtree", "types": []string{"TXT", "A", "NS", "CNAME"}})
	acme := acmeKey(t, g, zoneID)
	// A record the prerequisites can test.
	m := updateMsg("glb.example.com")
	m.Insert([]dns.RR{mustRR(t, "t.glb.example.com 60 IN TXT \"one\"")})
	if r, _, _ := sendUpdate(t, g.dns, m, "ops", secret, time.Now(), false); r.Rcode != dns.RcodeSuccess {
		t.Fatalf("setup update: %s", dns.RcodeToString[r.Rcode])
	}
	eventually(t, time.Second, "setup record served", func() (bool, string) {
		got, status := dig(t, g.dns, "t.glb.example.com", "TXT")
		return len(got) == 1, status
	})
	wrong := base64.StdEncoding.EncodeToString(make([]byte, 32))
	// Most cases change one record, most of them a TXT inside every grant;
	// some put a prerequisite before it.
	insert := func(rr string) func(m *dns.Msg) {
		return func(m *dns.Msg) { m.Insert([]dns.RR{mustRR(t, rr)}) }
	}
	insertX := insert("n.glb.example.com 60 IN TXT \"x\"")
	prereq := func(add func(m *dns.Msg, rrs []dns.RR), rr string) func(m *dns.Msg) {
		return func(m *dns.Msg) {
			add(m, []dns.RR{mustRR(t, rr)})
			insertX(m)
		}
	}

	cases := []struct {
		name   string
		key    string
		secret string
		at     time.Time
		build  func(m *dns.Msg)
		rcode  int
		tsig   uint16 // TSIG error expected
		ede    int    // -1: none expected
	}{
		{"BADSIG", "ops", wrong, time.Now(), insertX, dns.RcodeNotAuth, dns.RcodeBadSig, -1},
		{"BADKEY", "nokey", secret, time.Now(), insertX, dns.RcodeNotAuth, dns.RcodeBadKey, -1},
		{"BADTIME", "ops", secret, time.Now().Add(-10 * time.Minute), insertX, dns.RcodeNotAuth, dns.RcodeBadTime, -1},
		{"unsigned", "", "", time.Time{}, insertX, dns.RcodeRefused, 0, int(dns.ExtendedErrorCodeProhibited)},
		{"NameUsed fails: NXDOMAIN", "ops", secret, time.Now(), prereq((*dns.Msg).NameUsed, "absent.glb.example.com 0 IN A 0.0.0.0"), dns.RcodeNameError, 0, -1},
		{"NameNotUsed fails: YXDOMAIN", "ops", secret, time.Now(), prereq((*dns.Msg).NameNotUsed, "t.glb.example.com 0 IN A 0.0.0.0"), dns.RcodeYXDomain, 0, -1},
		{"RRsetUsed fails: NXRRSET", "ops", secret, time.Now(), prereq((*dns.Msg).RRsetUsed, "t.glb.example.com 0 IN A 0.0.0.0"), dns.RcodeNXRrset, 0, -1},
		{"RRsetNotUsed fails: YXRRSET", "ops", secret, time.Now(), prereq((*dns.Msg).RRsetNotUsed, "t.glb.example.com 0 IN TXT \"\""), dns.RcodeYXRrset, 0, -1},
		{"value-dependent RRset differs: NXRRSET", "ops", secret, time.Now(), prereq((*dns.Msg).Used, "t.glb.example.com 0 IN TXT \"two\""), dns.RcodeNXRrset, 0, -1},
		{"outside the grant", "acme", acme, time.Now(), insert("_acme-challenge.other.glb.example.com 60 IN TXT \"x\""), dns.RcodeRefused, 0, int(dns.ExtendedErrorCodeProhibited)},
		{"a type outside the grant", "acme", acme, time.Now(), insert("_acme-challenge.www.glb.example.com 60 IN A 192.0.2.9"), dns.RcodeRefused, 0, int(dns.ExtendedErrorCodeProhibited)},
		{"a load-balanced name", "ops", secret, time.Now(), insert("www.glb.example.com 60 IN TXT \"x\""), dns.RcodeRefused, 0, int(dns.ExtendedErrorCodeProhibited)},
		{"the apex NS", "ops", secret, time.Now(), insert("glb.example.com 60 IN NS ns9.example.net."), dns.RcodeRefused, 0, int(dns.ExtendedErrorCodeProhibited)},
		{"the apex SOA", "ops", secret, time.Now(), func(m *dns.Msg) {
			m.RemoveRRset([]dns.RR{mustRR(t, "glb.example.com 0 IN SOA . . 0 0 0 0 0")})
		}, dns.RcodeRefused, 0, int(dns.ExtendedErrorCodeProhibited)},
		{"a later record breaks the grant: nothing of the update applies", "acme", acme, time.Now(), func(m *dns.Msg) {
			m.Insert([]dns.RR{mustRR(t, "_acme-challenge.www.glb.example.com 60 IN TXT \"ok\"")})
			m.Insert([]dns.RR{mustRR(t, "_acme-challenge.www.glb.example.com 60 IN CNAME x.example.net.")})
		}, dns.RcodeRefused, 0, int(dns.ExtendedErrorCodeProhibited)},
		{"not a zone served here: NOTAUTH", "ops", secret, time.Now(), func(m *dns.Msg) {
			m.Question[0].Name = "example.org."
			m.Insert([]dns.RR{mustRR(t, "a.example.org 60 IN TXT \"x\"")})
		}, dns.RcodeNotAuth, 0, int(dns.ExtendedErrorCodeNotAuthoritative)},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := zoneState(t, g, zoneID)
			m := updateMsg("glb.example.com")
			m.SetEdns0(1232, false)
			tc.build(m)
			r, raw, mac := sendUpdate(t, g.dns, m, tc.key, tc.secret, tc.at, i%2 == 1)
			if r.Rcode != tc.rcode || r.Opcode != dns.OpcodeUpdate || !r.Response {
				t.Fatalf("rcode %s opcode %d, want %s", dns.RcodeToString[r.Rcode], r.Opcode, dns.RcodeToString[tc.rcode])
			}
			ts := r.IsTsig()
			switch {
			case tc.key == "":
				if ts != nil {
					t.Fatalf("an unsigned request got a signed reply")
				}
			case ts == nil:
				t.Fatalf("no TSIG in the reply")
			case ts.Error != tc.tsig:
				t.Fatalf("TSIG error %d, want %d", ts.Error, tc.tsig)
			case tc.tsig == dns.RcodeBadSig || tc.tsig == dns.RcodeBadKey:
				if ts.MACSize != 0 {
					t.Fatalf("BADSIG/BADKEY reply signed (RFC 8945 §5.3.2: it must not be)")
				}
				if d := time.Since(time.Unix(int64(ts.TimeSigned), 0)); d < -5*time.Second || d > 5*time.Second {
					t.Fatalf("BADSIG/BADKEY reply's Time Signed %d is not the server's clock (off by %v)", ts.TimeSigned, d)
				}
			case tc.tsig == dns.RcodeBadTime:
				// Signed with the key, the request's time, ours in Other Data.
				if err := verifyReplyMAC(r, tc.secret, mac); err != nil {
					t.Fatalf("BADTIME reply: %v", err)
				}
				other, _ := hex.DecodeString(ts.OtherData)
				if len(other) != 6 {
					t.Fatalf("other data %q", ts.OtherData)
				}
				server := int64(binary.BigEndian.Uint16(other))<<32 | int64(binary.BigEndian.Uint32(other[2:]))
				if d := time.Since(time.Unix(server, 0)); d < -2*time.Second || d > 2*time.Second {
					t.Fatalf("server time in Other Data off by %v", d)
				}
				if int64(ts.TimeSigned) != tc.at.Unix() {
					t.Fatalf("time signed %d, want the request's %d", ts.TimeSigned, tc.at.Unix())
				}
			case r.Rcode == dns.RcodeNotAuth:
				// miekg/dns will not check a NOTAUTH message.
				if err := verifyReplyMAC(r, tc.secret, mac); err != nil {
					t.Fatalf("reply's TSIG: %v", err)
				}
			default:
				if err := dns.TsigVerify(raw, tc.secret, mac, false); err != nil {
					t.Fatalf("reply's TSIG: %v", err)
				}
			}
			e := ede(r)
			switch {
			case tc.ede < 0 && e != nil:
				t.Fatalf("unexpected EDE %d %q", e.InfoCode, e.ExtraText)
			case tc.ede >= 0 && (e == nil || int(e.InfoCode) != tc.ede || e.ExtraText == ""):
				t.Fatalf("EDE %+v, want code %d with a reason", e, tc.ede)
			case e != nil:
				t.Logf("EDE %d: %s", e.InfoCode, e.ExtraText)
			}
			if after := zoneState(t, g, zoneID); after != before {
				t.Fatalf("the zone changed:\n%s\n%s", before, after)
			}
		})
	}
	if es := auditBy(t, g, "tsig:acme"); len(es) != 0 {
		t.Errorf("refused updates were audited: %v", es)
	}
}

// verifyReplyMAC checks the MAC of a signed reply as RFC 8945 §4.3.3
// builds it (the request's MAC, the message without its TSIG and with
// the original id, the TSIG variables), written here apart from
// miekg/dns, which refuses to check a NOTAUTH message at all.
func verifyReplyMAC(r *dns.Msg, secret, reqMAC string) error {
	ts := r.IsTsig()
	if ts == nil || ts.MACSize == 0 {
		return errors.New("not signed")
	}
	c := r.Copy()
	c.Extra = c.Extra[:len(c.Extra)-1]
	c.Id = ts.OrigId
	body, err := c.Pack()
	if err != nil {
		return err
	}
	key, err := base64.StdEncoding.DecodeString(secret)
	if err != nil {
		return err
	}
	h := hmac.New(sha256.New, key)
	rm, _ := hex.DecodeString(reqMAC)
	h.Write(binary.BigEndian.AppendUint16(nil, uint16(len(rm))))
	h.Write(rm)
	h.Write(body)
	name := make([]byte, 256)
	n, _ := dns.PackDomainName(strings.ToLower(ts.Hdr.Name), name, 0, nil, false)
	h.Write(name[:n])
	h.Write([]byte{0, 255, 0, 0, 0, 0}) // class ANY, TTL 0
	n, _ = dns.PackDomainName(strings.ToLower(ts.Algorithm), name, 0, nil, false)
	h.Write(name[:n])
	var v [10]byte
	binary.BigEndian.PutUint16(v[0:], uint16(ts.TimeSigned>>32))
	binary.BigEndian.PutUint32(v[2:], uint32(ts.TimeSigned))
	binary.BigEndian.PutUint16(v[6:], ts.Fudge)
	binary.BigEndian.PutUint16(v[8:], ts.Error)
	h.Write(v[:])
	other, _ := hex.DecodeString(ts.OtherData)
	h.Write(binary.BigEndian.AppendUint16(nil, uint16(len(other))))
	h.Write(other)
	if got, _ := hex.DecodeString(ts.MAC); !hmac.Equal(got, h.Sum(nil)) {
		return errors.New("MAC does not verify")
	}
	return nil
}
