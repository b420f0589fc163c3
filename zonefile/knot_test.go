package zonefile_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/dnsserver"
	"github.com/glb-dns/glb/internal/knottest"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
	"github.com/glb-dns/glb/zonefile"
)

// zoneFromFile is the zone of move.example as an operator would set it up
// to match the file: its SOA and apex NS, then the file imported.
func zoneFromFile(t *testing.T, path string) *pools.Zone {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := zonefile.Parse(bytes.NewReader(b), "move.example", 3600)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	z := &pools.Zone{Meta: pools.Meta{ID: "move"}, Name: "move.example", TTL: f.SOA.TTL, SOA: f.SOA.SOA, Serial: f.SOA.Serial}
	for _, ns := range f.NS {
		z.Nameservers = append(z.Nameservers, ns.Record.Content)
	}
	records, _, err := zonefile.Import(bytes.NewReader(b), z, zonefile.Replace, nil)
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	z.Records = records
	if err := z.Validate(nil); err != nil {
		t.Fatalf("the imported zone does not validate: %v", err)
	}
	return z
}

// serveGLB serves cfg's zones with glb's DNS server on 127.0.0.1.
func serveGLB(t *testing.T, cfg *pools.Config) int {
	t.Helper()
	st, err := steering.Compile(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := dnsserver.Compile(st, nil)
	if err != nil {
		t.Fatalf("dns compile: %v", err)
	}
	s, err := dnsserver.New(dnsserver.Config{Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	s.Publish(snap)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	return int(s.Addr().Port())
}

// generated is what the file's $GENERATE lines stand for, written out by
// hand: Knot and NSD have no $GENERATE (a BIND extension).
var generated = map[string]string{
	"$GENERATE 1-4 host-$ A 198.51.100.$":                 "host-1 A 198.51.100.1\nhost-2 A 198.51.100.2\nhost-3 A 198.51.100.3\nhost-4 A 198.51.100.4",
	"$GENERATE 10-11 gen${0,3,d} AAAA 2001:db8::${0,0,x}": "gen010 AAAA 2001:db8::a\ngen011 AAAA 2001:db8::b",
}

// knotCopy is the file for Knot: the same, $GENERATE written out.
func knotCopy(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for g, lines := range generated {
		if !strings.Contains(s, g+"\n") {
			t.Fatalf("the file lacks %q", g)
		}
		s = strings.Replace(s, g+"\n", lines+"\n", 1)
	}
	out := filepath.Join(t.TempDir(), "move.example.zone")
	if err := os.WriteFile(out, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSameAnswersAsKnot imports a file as BIND writes it and serves it;
// Knot loads the same file. For every name and type of the file, kdig
// gets the same rcode, AA and answer from both.
func TestSameAnswersAsKnot(t *testing.T) {
	t.Parallel()
	knottest.NeedTool(t, "kdig", "knot-dnsutils")
	path, err := filepath.Abs("testdata/bind.zone")
	if err != nil {
		t.Fatal(err)
	}
	z := zoneFromFile(t, path)
	knotFile := knotCopy(t, path)
	cfg := pools.NewConfig()
	cfg.Zones = []pools.Zone{*z}
	glb := serveGLB(t, cfg)
	knot := knottest.Start(t, func(string) string {
		return "zone:\n  - domain: move.example\n    file: " + knotFile + "\n    zonefile-sync: -1\n    journal-content: none\n"
	}, "move.example")

	type q struct{ name, typ string }
	var qs []q
	seen := map[q]bool{}
	add := func(name, typ string) {
		k := q{name, typ}
		if !seen[k] {
			seen[k] = true
			qs = append(qs, k)
		}
	}
	add("move.example", "SOA")
	add("move.example", "NS")
	types := map[string]bool{}
	for _, r := range z.Records {
		add(r.Name, r.Type)
		types[r.Type] = true
	}
	if len(types) < 25 {
		t.Errorf("the file has %d types, want at least 25", len(types))
	}
	add("nothing.move.example", "A") // NXDOMAIN from both
	add("web.move.example", "MX")    // NODATA from both
	// Below old's DNAME: the DNAME and the CNAME made from it (RFC 6672),
	// at one label and at two, and whatever the type asked.
	add("a.old.move.example", "A")
	add("x.y.old.move.example", "TXT")
	add("Mixed.Old.move.example", "AAAA")

	// glb's export of the zone, loaded by a second Knot, answers the same.
	var exp bytes.Buffer
	if err := zonefile.Export(&exp, z, nil); err != nil {
		t.Fatal(err)
	}
	expFile := filepath.Join(t.TempDir(), "export.zone")
	if err := os.WriteFile(expFile, exp.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	reload := knottest.Start(t, func(string) string {
		return "zone:\n  - domain: move.example\n    file: " + expFile + "\n    zonefile-sync: -1\n    journal-content: none\n"
	}, "move.example")

	for _, c := range qs {
		g := knottest.Kdig(t, glb, c.name, c.typ)
		k := knottest.Kdig(t, knot.Port, c.name, c.typ)
		if g.Status != k.Status || g.AA != k.AA || !slices.Equal(g.Answer, k.Answer) {
			t.Errorf("%s %s:\nglb  %s aa=%v %q\nknot %s aa=%v %q", c.name, c.typ, g.Status, g.AA, g.Answer, k.Status, k.AA, k.Answer)
		}
		if k.Status == "" {
			t.Errorf("%s %s: no answer from knot:\n%s", c.name, c.typ, k.Raw)
		}
		if c.typ == "SOA" && !g.AA {
			t.Errorf("%s SOA without AA", c.name)
		}
		e := knottest.Kdig(t, reload.Port, c.name, c.typ)
		if e.Status != k.Status || e.AA != k.AA || !slices.Equal(e.Answer, k.Answer) {
			t.Errorf("%s %s from glb's export:\nexport %s aa=%v %q\nfile   %s aa=%v %q", c.name, c.typ, e.Status, e.AA, e.Answer, k.Status, k.AA, k.Answer)
		}
	}
	t.Logf("%d questions on %d types", len(qs), len(types))
}
