package zonefile_test

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/zonefile"
)

// TestTypeTableIsTheLibrarys: pools keeps types by the mnemonics and codes
// the DNS library reads, so that a stored type always compiles.
func TestTypeTableIsTheLibrarys(t *testing.T) {
	t.Parallel()
	for name, code := range pools.RRTypes() {
		if got, ok := dns.StringToType[name]; !ok || got != code {
			t.Errorf("%s: pools says %d, the library %d (%v)", name, code, got, ok)
		}
	}
}

// TestAcceptedContentCompiles: whatever pools accepts for a record, the
// DNS library parses and packs (the DNS server's compile would otherwise
// refuse the whole snapshot). Each type has good and bad content.
func TestAcceptedContentCompiles(t *testing.T) {
	t.Parallel()
	cases := []struct {
		typ, content string
		ok           bool
	}{
		{"PTR", "web.example.com.", true}, {"PTR", "not a name", false},
		{"DNAME", "new.example.", true},
		{"HINFO", `"PC" "Debian"`, true}, {"HINFO", `PC Debian`, true}, {"HINFO", `"PC"`, false}, {"HINFO", `"PC" "x`, false},
		{"HINFO", `"` + strings.Repeat("a", 256) + `" "x"`, false},
		{"RP", "a.example. b.example.", true}, {"AFSDB", "1 afs.example.", true}, {"AFSDB", "70000 afs.example.", false},
		{"KX", "10 kx.example.", true}, {"RT", "10 rt.example.", true}, {"LP", "10 lp.example.", true},
		{"L32", "10 10.1.2.0", true}, {"L32", "10 2001:db8::1", false},
		{"NID", "10 0014:4fff:ff20:ee64", true}, {"L64", "10 2001:0db8:1140:1000", true}, {"NID", "10 0014:4fff:ff20", false},
		{"NAPTR", `100 10 "S" "SIP+D2U" "" _sip._udp.example.`, true}, {"NAPTR", `100 10 S SIP "" .`, false},
		{"NAPTR", `100 50 "u" "E2U+sip" "!^.*$!sip:info@example!" .`, true},
		{"URI", `10 1 "https://example/"`, true}, {"URI", `10 1 https://example/`, false},
		{"TLSA", "3 1 1 0C72AC70", true}, {"TLSA", "3 1 1 0C72AC7", false}, {"TLSA", "3 1 1 ZZ", false},
		{"SMIMEA", "3 0 1 8BD0 D9A4", true}, {"SSHFP", "4 2 1234", true}, {"SSHFP", "4 2", false},
		{"ZONEMD", "2024010101 1 1 7fbba6d5", true},
		{"DNSKEY", "257 3 13 mdsswUyr3DPW132mOi8V9xESWE8jTo0d", true}, {"DNSKEY", "257 3 13 !!!", false},
		{"CDNSKEY", "0 3 0 AA==", true},
		{"CDS", "20326 13 2 E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D", true},
		{"OPENPGPKEY", "mQINBFoBABABEAD1", true}, {"DHCID", "AAIBY2/AuCccgoJbsaxcQc9TUapptP69lOjxfNuVAA2kjEA=", true},
		{"EUI48", "00-00-5e-00-53-2a", true}, {"EUI48", "00-00-5e-00-53", false}, {"EUI64", "00-00-5e-ef-10-00-00-2a", true},
		{"SPF", `"v=spf1 -all"`, true}, {"SPF", `"v=spf1" "-all"`, true},
		{"LOC", `\# 16 000016138b3cf018810cbce0009895b8`, true}, {"LOC", `52 22 23.000 N 4 53 32.000 E -2.00m`, false},
		{"TYPE65534", `\# 4 0a000001`, true}, {"TYPE65534", `\# 5 0a000001`, false}, {"TYPE65534", `\# 0`, true},
		{"APL", `\# 14 00011503c0a82000011c83c0a826`, true},
		{"NSAP-PTR", `\# 3 016100`, true},
		{"SOA", `\# 0`, false}, {"RRSIG", `\# 0`, false}, {"NSEC", `\# 0`, false}, {"OPT", `\# 0`, false},
		{"TYPE41", `\# 0`, false}, {"TYPE251", `\# 0`, false}, {"TYPE0", `\# 0`, false}, {"BOGUS", `\# 0`, false},
		{"CNAME", `\# 0`, false}, {"NS", `\# 0`, false},
	}
	for _, c := range cases {
		z := pools.Zone{Name: "example", Nameservers: []string{"ns.example"}, SOA: pools.SOA{Refresh: 1, Retry: 1, Expire: 1},
			Records: []pools.Record{{Name: "x.example", Type: c.typ, Content: c.content}}}
		err := z.Validate(nil)
		if (err == nil) != c.ok {
			t.Errorf("%s %q: validation %v, want ok %v", c.typ, c.content, err, c.ok)
		}
		if err != nil {
			var ve *pools.ValidationError
			if !errors.As(err, &ve) || len(ve.Errors) != 1 || !strings.HasPrefix(ve.Errors[0].Path, "records[0].") {
				t.Errorf("%s %q: error %v does not name the record's field", c.typ, c.content, err)
			}
			continue
		}
		rr, perr := dns.NewRR("x.example. 300 IN " + c.typ + " " + c.content)
		if perr != nil || rr == nil {
			t.Errorf("%s %q: pools accepts what the library does not parse: %v", c.typ, c.content, perr)
			continue
		}
		if _, perr := dns.PackRR(rr, make([]byte, 65535), 0, nil, false); perr != nil {
			t.Errorf("%s %q: pools accepts what the library does not pack: %v", c.typ, c.content, perr)
		}
	}
}

// TestParseLines: each record knows the line it starts on, through
// parentheses, comments, directives and $GENERATE; a $GENERATE record
// without a TTL takes the $TTL in force.
func TestParseLines(t *testing.T) {
	t.Parallel()
	file := strings.Join([]string{
		"; comment",                       // 1
		"$ORIGIN example.",                // 2
		"$TTL 1h",                         // 3
		"",                                // 4
		"a IN A 192.0.2.1 ; trailing",     // 5
		"b IN TXT ( \"one\"",              // 6
		"   \"two\" )",                    // 7
		"; between",                       // 8
		"$TTL 90",                         // 9
		"$GENERATE 1-2 g$ A 192.0.2.$",    // 10
		"$GENERATE 3-3 g$ 30 A 192.0.2.$", // 11
		"c 45 IN AAAA 2001:db8::1",        // 12
		"d IN A 192.0.2.9",                // 13 (no newline)
	}, "\n")
	f, err := zonefile.Parse(strings.NewReader(file), "example", 300)
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		line int
		name string
		ttl  uint32
	}
	var out []got
	for _, e := range f.Records {
		out = append(out, got{e.Line, e.Record.Name, e.Record.TTL})
	}
	want := []got{{5, "a.example", 3600}, {6, "b.example", 3600}, {10, "g1.example", 90}, {10, "g2.example", 90},
		{11, "g3.example", 30}, {12, "c.example", 45}, {13, "d.example", 90}}
	if !slices.Equal(out, want) {
		t.Errorf("records\n got %v\nwant %v", out, want)
	}
}

// TestExportParsesBack: an export read back gives the zone's records,
// each fully qualified, generic ones generic.
func TestExportParsesBack(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/bind.zone")
	if err != nil {
		t.Fatal(err)
	}
	z := &pools.Zone{Name: "move.example", Nameservers: []string{"ns1.move.example"}, TTL: 300,
		SOA: pools.SOA{Refresh: 1, Retry: 1, Expire: 1, Minimum: 1}, Serial: 7,
		Records: []pools.Record{{Name: "rel.move.example", Type: "MX", Content: "10 mail.move.example"}}}
	records, _, err := zonefile.Import(bytes.NewReader(b), z, zonefile.Merge, nil)
	if err != nil {
		t.Fatal(err)
	}
	z.Records = records
	var out bytes.Buffer
	if err := zonefile.Export(&out, z, []zonefile.LB{{ID: "lb1", Name: "www2.move.example",
		Records: []pools.Record{{Name: "www2.move.example", Type: "A", Content: "192.0.2.9", TTL: 30}}}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "rel.move.example.\t300\tIN\tMX\t10 mail.move.example.\n") {
		t.Errorf("a stored name without its dot is not written fully qualified:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "; load balancer lb1 (www2.move.example)") {
		t.Errorf("no comment names the load balancer:\n%s", out.String())
	}
	back, err := zonefile.Parse(&out, "move.example", 300)
	if err != nil {
		t.Fatalf("the export does not parse: %v\n%s", err, out.String())
	}
	if back.SOA == nil || back.SOA.Serial != 7 || len(back.NS) != 1 {
		t.Errorf("SOA %+v NS %v", back.SOA, back.NS)
	}
	z2 := *z
	z2.Records = nil
	again, d, err := zonefile.Plan(&z2, back, zonefile.Replace, map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != len(z.Records)+1 || len(d.Added) != len(again) {
		t.Errorf("read back %d records, want %d and the load balancer's", len(again), len(z.Records))
	}
}
