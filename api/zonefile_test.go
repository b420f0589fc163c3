package api_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/internal/knottest"
	"github.com/glb-dns/glb/outbound"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
	"github.com/glb-dns/glb/zonefile"
)

// moveZone creates the zone of zonefile/testdata/bind.zone, with other
// nameservers and SOA timers than the file's, and returns its id.
func (e *env) moveZone() string {
	e.t.Helper()
	return e.create(pools.KindZone, map[string]any{
		"name":        "move.example",
		"nameservers": []string{"ns1.move.example", "ns3.move.example"},
		"soa":         map[string]any{"rname": "hostmaster.move.example", "refresh": 7200},
		"records":     []map[string]any{{"name": "keep.move.example", "type": "TXT", "content": `"kept"`}},
	})["id"].(string)
}

func bindZone(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../zonefile/testdata/bind.zone")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type importAnswer struct{ Result api.ImportResult }

func (e *env) importFile(id, query, file string) response {
	e.t.Helper()
	return e.do("POST", "/api/v1/zones/"+id+"/import"+query, file, "Content-Type", "text/dns")
}

func (e *env) export(id string) string {
	e.t.Helper()
	r := e.do("GET", "/api/v1/zones/"+id+"/export", nil)
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "text/dns" {
		e.t.Fatalf("export: %d %q %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	return string(r.body)
}

func (e *env) zone(id string) pools.Zone {
	e.t.Helper()
	var out struct{ Result pools.Zone }
	r := e.do("GET", "/api/v1/zones/"+id, nil)
	r.json(e.t, &out)
	return out.Result
}

// TestZoneImportDryRunThenMerge: a dry run answers the diff and stores
// nothing; the same import then stores exactly that diff, and the SOA and
// apex NS of the file are reported, not applied.
func TestZoneImportDryRunThenMerge(t *testing.T) {
	e := parallelEnv(t, nil)
	id := e.moveZone()
	before := e.export(id)
	z0 := e.zone(id)

	var dry importAnswer
	r := e.importFile(id, "?dry_run=true", bindZone(t))
	if r.status != http.StatusOK {
		t.Fatalf("dry run: %d %s", r.status, r.body)
	}
	r.json(t, &dry)
	if dry.Result.Applied || !dry.Result.DryRun || dry.Result.Serial != z0.Serial {
		t.Errorf("dry run answered applied %v dry_run %v serial %d", dry.Result.Applied, dry.Result.DryRun, dry.Result.Serial)
	}
	if after := e.export(id); after != before {
		t.Fatalf("a dry run changed the zone:\n%s\n---\n%s", before, after)
	}
	types := map[string]bool{}
	for _, rec := range dry.Result.Added {
		types[rec.Type] = true
	}
	if len(types) < 25 {
		t.Errorf("the file adds %d record types, want at least 25: %v", len(types), types)
	}
	if len(dry.Result.Removed) != 0 {
		t.Errorf("merge removes %v", dry.Result.Removed)
	}
	soa := map[string][2]string{}
	for _, d := range dry.Result.SOA {
		soa[d.Field] = [2]string{d.Zone, d.File}
	}
	if soa["serial"][1] != "2024010101" || soa["expire"][1] != "1209600" || soa["mname"] != [2]string{"ns1.move.example", "ns1.move.example"} && soa["mname"][0] != "" {
		t.Errorf("SOA differences %v", dry.Result.SOA)
	}
	if _, same := soa["refresh"]; same {
		t.Errorf("refresh is 7200 in both, yet reported: %v", dry.Result.SOA)
	}
	if ns := dry.Result.Nameservers; ns == nil || !slices.Equal(ns.File, []string{"ns1.move.example", "ns2.move.example"}) ||
		!slices.Equal(ns.Zone, []string{"ns1.move.example", "ns3.move.example"}) {
		t.Errorf("nameservers difference %+v", dry.Result.Nameservers)
	}

	var done importAnswer
	r = e.importFile(id, "", bindZone(t))
	if r.status != http.StatusOK {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	r.json(t, &done)
	if !done.Result.Applied || done.Result.Serial == z0.Serial || len(done.Result.Added) != len(dry.Result.Added) {
		t.Errorf("import answered applied %v serial %d (was %d), %d added (dry run: %d)",
			done.Result.Applied, done.Result.Serial, z0.Serial, len(done.Result.Added), len(dry.Result.Added))
	}
	z := e.zone(id)
	if len(z.Records) != len(z0.Records)+len(dry.Result.Added) {
		t.Errorf("zone has %d records, want %d", len(z.Records), len(z0.Records)+len(dry.Result.Added))
	}
	if !slices.Equal(z.Nameservers, z0.Nameservers) || z.SOA != z0.SOA {
		t.Errorf("the file's SOA or NS were applied: %+v %v", z.SOA, z.Nameservers)
	}
	if z.Serial != done.Result.Serial {
		t.Errorf("zone serial %d, import answered %d", z.Serial, done.Result.Serial)
	}
	// The same file again changes nothing and stores nothing.
	var again importAnswer
	e.importFile(id, "", bindZone(t)).json(t, &again)
	if again.Result.Applied || len(again.Result.Added) != 0 || again.Result.Unchanged != len(dry.Result.Added) {
		t.Errorf("second import: applied %v, %d added, %d unchanged", again.Result.Applied, len(again.Result.Added), again.Result.Unchanged)
	}
	if e.zone(id).Serial != z.Serial {
		t.Error("an import that changes nothing advanced the serial")
	}
}

// TestZoneImportReplace: replace removes what the file lacks, merge keeps
// it, and a TTL difference is a change.
func TestZoneImportReplace(t *testing.T) {
	e := parallelEnv(t, nil)
	id := e.moveZone()
	file := "$ORIGIN move.example.\nkeep 60 IN TXT \"kept\"\nnew 300 IN A 192.0.2.7\n"
	var m importAnswer
	e.importFile(id, "?mode=merge&dry_run=true", file).json(t, &m)
	if len(m.Result.Removed) != 0 || len(m.Result.Added) != 1 || len(m.Result.Changed) != 1 || m.Result.Changed[0].After.TTL != 60 {
		t.Errorf("merge diff %+v", m.Result)
	}
	var rep importAnswer
	e.importFile(id, "?mode=replace", "$ORIGIN move.example.\nnew 300 IN A 192.0.2.7\n").json(t, &rep)
	if len(rep.Result.Removed) != 1 || rep.Result.Removed[0].Name != "keep.move.example" || !rep.Result.Applied {
		t.Errorf("replace diff %+v", rep.Result)
	}
	if z := e.zone(id); len(z.Records) != 1 || z.Records[0].Name != "new.move.example" {
		t.Errorf("after replace: %+v", z.Records)
	}
}

// TestZoneImportErrorsNameLines: every error of a bad file names its
// line, and nothing is stored.
func TestZoneImportErrorsNameLines(t *testing.T) {
	t.Parallel()
	e := newSnapshotEnv(t)
	f := e.fixture()
	before := e.export(f.zone)
	cases := []struct {
		name, file string
		want       map[string]string // path → a word of the message
	}{
		{"semantic errors together", strings.Join([]string{
			"$ORIGIN glb.example.com.",
			"ok      IN A     192.0.2.1",
			"alias   IN CNAME ok",
			"alias   IN TXT   \"beside a CNAME\"",
			"outside.example.org. IN A 192.0.2.2",
			"www     IN A     192.0.2.3",
			"sig     IN RRSIG A 13 2 300 20300101000000 20200101000000 1 glb.example.com. AAAA",
			"*.wild  IN A     192.0.2.4",
			"mx      IN MX    10 mail",
			"",
		}, "\n"), map[string]string{
			"line 3": "CNAME", "line 5": "not inside", "line 6": "load balancer", "line 7": "signs zones online",
			"line 8": "wildcard",
		}},
		{"$INCLUDE", "$ORIGIN glb.example.com.\nok IN A 192.0.2.1\n$INCLUDE other.zone\n", map[string]string{"line 3": "$INCLUDE"}},
		{"broken record", "$ORIGIN glb.example.com.\nok IN A 192.0.2.1\n\nbad IN A 192.0.2.300\n", map[string]string{"line 4": "A"}},
		{"broken record across lines", "$ORIGIN glb.example.com.\nbad IN MX ( 10\n  mail. extra )\n", map[string]string{"line 3": ""}},
		{"every syntax error, reading on after each", strings.Join([]string{
			"$ORIGIN glb.example.com.",
			"ok      IN A     192.0.2.1",
			"bad1    IN A     192.0.2.300",
			"        IN TXT   \"bad1's, passed over with it\"",
			"fine    IN A     192.0.2.2",
			"bad2    IN MX    ( 10",
			"        mail. extra )",
			"$ORIGIN sub.glb.example.com.",
			"bad3    IN AAAA  not-an-address",
			"outside.example.org. IN A 192.0.2.5",
			"www     IN A     192.0.2.3", // www.sub: no load balancer there, if the $ORIGIN holds
			"",
		}, "\n"), map[string]string{"line 3": "A", "line 7": "", "line 9": "AAAA", "line 10": "not inside"}},
		{"no record", "; nothing\n", map[string]string{"line 1": "no record"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := e.importFile(f.zone, "", c.file).problem(t, http.StatusBadRequest)
			got := map[string]string{}
			for _, fe := range p.Errors {
				got[fe.Path] = fe.Message
			}
			if len(got) != len(c.want) {
				t.Errorf("errors %v, want paths %v", p.Errors, c.want)
			}
			for path, word := range c.want {
				if msg, ok := got[path]; !ok || !strings.Contains(msg, word) {
					t.Errorf("%s: %q, want it to say %q (all: %v)", path, msg, word, p.Errors)
				}
			}
		})
	}
	if after := e.export(f.zone); after != before {
		t.Errorf("a refused import changed the zone:\n%s\n---\n%s", before, after)
	}
}

// TestZoneImportRequest: the query and the media type are checked before
// the file is read.
func TestZoneImportRequest(t *testing.T) {
	e := parallelEnv(t, nil)
	id := e.moveZone()
	p := e.importFile(id, "?mode=upsert&dry_run=yes", "x IN A 192.0.2.1\n").problem(t, http.StatusBadRequest)
	if len(p.Errors) != 2 || p.Errors[0].Path != "mode" || p.Errors[1].Path != "dry_run" {
		t.Errorf("errors %v", p.Errors)
	}
	e.do("POST", "/api/v1/zones/"+id+"/import", "x IN A 192.0.2.1\n", "Content-Type", "text/plain").problem(t, http.StatusUnsupportedMediaType)
	// JSON is the AXFR form: a file sent as JSON is malformed JSON.
	e.do("POST", "/api/v1/zones/"+id+"/import", "x IN A 192.0.2.1\n").problem(t, http.StatusBadRequest)
	e.importFile("nope", "", "x IN A 192.0.2.1\n").problem(t, http.StatusNotFound)
	e.do("POST", "/api/v1/zones/"+id+"/import", "x IN A 192.0.2.1\n", "Content-Type", "text/dns", "If-Match", `"999999"`).problem(t, http.StatusPreconditionFailed)
}

// newSnapshotEnv is newEnv with a steering engine that compiles the
// store's configuration as it is at each call, all origins healthy.
func newSnapshotEnv(t *testing.T) *env {
	t.Helper()
	var e *env
	e = newEnv(t, func(o *api.Options) {
		o.Snapshot = func() (*steering.Snapshot, steering.Locator) {
			cfg, err := e.store.Config(context.Background())
			if err != nil {
				return nil, nil
			}
			s, err := steering.Compile(cfg, nil)
			if err != nil {
				t.Errorf("compile: %v", err)
				return nil, nil
			}
			return s, nil
		}
	})
	return e
}

// TestZoneExportLoadBalancer: a load-balanced name is written as the
// answer of a client of unknown location, after a comment naming it; the
// file parses back into the same records.
func TestZoneExportLoadBalancer(t *testing.T) {
	t.Parallel()
	e := newSnapshotEnv(t)
	f := e.fixture()
	out := e.export(f.zone)
	for _, want := range []string{
		"$ORIGIN glb.example.com.\n",
		"glb.example.com.\t300\tIN\tSOA\tns1.glb.example.com. hostmaster.example.com. ",
		"glb.example.com.\t300\tIN\tNS\tns2.glb.example.com.\n",
		"ns1.glb.example.com.\t300\tIN\tA\t192.0.2.53\n",
		"; load balancer " + f.lb + " (www.glb.example.com): the answer of a client of unknown location now\nwww.glb.example.com.\t30\tIN\tA\t192.0.2.10\n",
		"www.glb.example.com.\t30\tIN\tAAAA\t2001:db8::12\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("export lacks %q:\n%s", want, out)
		}
	}
}

// TestZoneExportHTTPSRecord: a load balancer with an HTTPS record
// exports it as DNS answers it to a client of unknown location: its
// parameters, and as hints the addresses of its A and AAAA records;
// without one, none is written.
func TestZoneExportHTTPSRecord(t *testing.T) {
	t.Parallel()
	e := newSnapshotEnv(t)
	f := e.fixture()
	body := lbBody(f.zone, f.pool)
	body["name"] = "app.glb.example.com"
	body["https"] = map[string]any{"alpn": []string{"h2", "h3"}, "port": 8443}
	e.create(pools.KindLoadBalancer, body)
	out := e.export(f.zone)
	var v4, v6, https []string
	for _, l := range strings.Split(out, "\n") {
		fs := strings.SplitN(l, "\t", 5)
		if len(fs) < 5 {
			continue
		}
		switch {
		case fs[0] == "www.glb.example.com." && fs[3] == "HTTPS":
			t.Errorf("a load balancer without an HTTPS record exports one: %s", l)
		case fs[0] != "app.glb.example.com.":
		case fs[3] == "A":
			v4 = append(v4, fs[4])
		case fs[3] == "AAAA":
			v6 = append(v6, fs[4])
		case fs[3] == "HTTPS":
			https = append(https, fs[4])
		}
	}
	if len(https) != 1 || len(v4) == 0 || len(v6) == 0 {
		t.Fatalf("app's records: A %v AAAA %v HTTPS %v\n%s", v4, v6, https, out)
	}
	m := regexp.MustCompile(`^1 \. alpn="?h2,h3"? port="?8443"? ipv4hint="?([^" ]+)"? ipv6hint="?([^" ]+)"?$`).FindStringSubmatch(https[0])
	if m == nil {
		t.Fatalf("app's HTTPS record: %q", https[0])
	}
	hint := func(s string) []string { h := strings.Split(s, ","); slices.Sort(h); return h }
	slices.Sort(v4)
	slices.Sort(v6)
	if !slices.Equal(hint(m[1]), v4) || !slices.Equal(hint(m[2]), v6) {
		t.Errorf("hints %s / %s, the name's addresses %v / %v", m[1], m[2], v4, v6)
	}
}

// TestZoneImportAXFR pulls a zone from a real Knot with TSIG: a dry run
// answers the diff, the import stores it; a wrong key and a server that
// does not answer name their fields; without the integrations scope or
// outside the outbound policy nothing is dialled.
func TestZoneImportAXFR(t *testing.T) {
	knottest.NeedTool(t, "kdig", "knot-dnsutils")
	t.Parallel()
	const secret = "c2VjcmV0IG9mIHRoZSBzZXJ2ZXIgYmVpbmcgbGVmdA=="
	dir := t.TempDir()
	file := filepath.Join(dir, "move.example.zone")
	if err := os.WriteFile(file, []byte("$ORIGIN move.example.\n$TTL 600\n@ SOA ns1 hostmaster 7 3600 600 86400 60\n@ NS ns1\nns1 A 192.0.2.53\nptr PTR web.move.example.\nloc LOC 52 22 23.000 N 4 53 32.000 E -2.00m 0.00m 10000m 10m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	knot := knottest.Start(t, func(string) string {
		return "key:\n  - id: old\n    algorithm: hmac-sha256\n    secret: " + secret + "\n\nacl:\n  - id: xfr\n    address: 127.0.0.0/8\n    key: old\n    action: transfer\n\n" +
			"zone:\n  - domain: move.example\n    file: " + file + "\n    zonefile-sync: -1\n    journal-content: none\n    acl: xfr\n"
	}, "move.example")
	server := "127.0.0.1:" + strconv.Itoa(knot.Port)
	policy, err := outbound.New([]string{"127.0.0.0/8"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(o *api.Options) { o.Outbound = policy })
	id := e.moveZone()
	body := func(secret string) map[string]any {
		return map[string]any{"axfr": map[string]any{"server": server, "tsig": map[string]any{"name": "old", "algorithm": "hmac-sha256", "secret": secret}}}
	}

	var dry importAnswer
	r := e.do("POST", "/api/v1/zones/"+id+"/import?dry_run=true", body(secret))
	if r.status != http.StatusOK {
		t.Fatalf("dry run: %d %s", r.status, r.body)
	}
	r.json(t, &dry)
	var added []string
	for _, rec := range dry.Result.Added {
		added = append(added, rec.Name+" "+rec.Type+" "+rec.Content)
	}
	slices.Sort(added)
	want := []string{"loc.move.example LOC \\# 16 000016138b3cf018810cbce0009895b8", "ns1.move.example A 192.0.2.53", "ptr.move.example PTR web.move.example."}
	if !slices.Equal(added, want) || dry.Result.Applied {
		t.Errorf("dry run added %q (applied %v), want %q", added, dry.Result.Applied, want)
	}
	if soa := dry.Result.SOA; !slices.ContainsFunc(soa, func(d zonefile.FieldDifference) bool { return d.Field == "serial" && d.File == "7" }) {
		t.Errorf("SOA differences %+v", soa)
	}
	if n := len(e.zone(id).Records); n != 1 {
		t.Fatalf("a dry run stored records: %d", n)
	}
	var done importAnswer
	e.do("POST", "/api/v1/zones/"+id+"/import", body(secret)).json(t, &done)
	if !done.Result.Applied || len(e.zone(id).Records) != 4 {
		t.Errorf("import: %+v, zone has %d records", done.Result, len(e.zone(id).Records))
	}

	p := e.do("POST", "/api/v1/zones/"+id+"/import", body("d3JvbmcgZnJvbSB0aGUgc3RhcnQ=")).problem(t, http.StatusBadRequest)
	if len(p.Errors) != 1 || p.Errors[0].Path != "axfr.tsig" {
		t.Errorf("wrong key: %+v", p.Errors)
	}
	closed := knottest.FreePort(t)
	p = e.do("POST", "/api/v1/zones/"+id+"/import", map[string]any{"axfr": map[string]any{"server": "127.0.0.1:" + strconv.Itoa(closed)}}).problem(t, http.StatusBadRequest)
	if len(p.Errors) != 1 || p.Errors[0].Path != "axfr.server" {
		t.Errorf("no server: %+v", p.Errors)
	}
	p = e.do("POST", "/api/v1/zones/"+id+"/import", map[string]any{"axfr": map[string]any{}}).problem(t, http.StatusBadRequest)
	if len(p.Errors) != 1 || p.Errors[0].Path != "axfr.server" {
		t.Errorf("empty: %+v", p.Errors)
	}
	// A token that may write but not connect out: 403, nothing dialled.
	e3 := newEnv(t, func(o *api.Options) { o.Token, o.Outbound = "boot", policy })
	writer := e3.newToken("writer", "read", "write")
	id3 := e3.moveZone()
	if p := e3.do("POST", "/api/v1/zones/"+id3+"/import", body(secret), bearer(writer)...).problem(t, http.StatusForbidden); p.MissingScope != "integrations" {
		t.Errorf("without integrations: %+v", p)
	}
	// The file import needs no more than write.
	if r := e3.do("POST", "/api/v1/zones/"+id3+"/import?dry_run=true", "x IN A 192.0.2.1\n", append(bearer(writer), "Content-Type", "text/dns")...); r.status != http.StatusOK {
		t.Errorf("file import with write: %d %s", r.status, r.body)
	}
	// The default outbound policy refuses loopback: nothing is dialled.
	e2 := newEnv(t, nil)
	id2 := e2.moveZone()
	p = e2.do("POST", "/api/v1/zones/"+id2+"/import", body(secret)).problem(t, http.StatusBadRequest)
	if len(p.Errors) != 1 || p.Errors[0].Path != "axfr.server" || !strings.Contains(p.Errors[0].Message, "refused") {
		t.Errorf("outside the policy: %+v", p.Errors)
	}
}
