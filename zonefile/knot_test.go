package zonefile_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/dnsserver"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/steering"
	"github.com/glb-dns/glb/zonefile"
)

// needTool skips a test whose tool is missing outside CI and fails it in
// CI, where scripts/install-deps.sh installs it.
func needTool(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is required in CI (Debian: %s; scripts/install-deps.sh installs it)", name, pkg)
		}
		t.Skipf("%s not installed (Debian: %s); scripts/install-deps.sh installs it", name, pkg)
	}
	return p
}

// freePort returns a port on 127.0.0.1 free for TCP and UDP a moment
// ago, for a server (knotd) that cannot be told to pick one itself.
func freePort(t *testing.T) int {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(port))
		l.Close()
		if err == nil {
			u.Close()
			return port
		}
	}
	t.Fatal("no free port")
	return 0
}

// Knot is a knotd started for a test, serving zones from files.
type Knot struct {
	Port int
	Dir  string
}

// startKnot runs knotd on 127.0.0.1 with a config of its own in a
// temporary directory; conf is appended to the server section (zones,
// keys, ACLs). It returns once knotd answers the SOA of apex.
func startKnot(t *testing.T, conf func(dir string) string, apex string) *Knot {
	t.Helper()
	knotd := needTool(t, "knotd", "knot")
	dir := t.TempDir()
	k := &Knot{Port: freePort(t), Dir: dir}
	cfg := fmt.Sprintf("server:\n    listen: 127.0.0.1@%d\n    rundir: %s\n\nlog:\n  - target: stderr\n    any: info\n\ndatabase:\n    storage: %s\n\ncontrol:\n    listen: %s\n\n%s",
		k.Port, dir, dir, filepath.Join(dir, "knot.sock"), conf(dir))
	if err := os.WriteFile(filepath.Join(dir, "knot.conf"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	cmd := exec.Command(knotd, "-c", filepath.Join(dir, "knot.conf"))
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("knotd log:\n%s", logs.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := kdig(t, k.Port, apex, "SOA")
		if r.status == "NOERROR" && len(r.answer) == 1 {
			return k
		}
		if time.Now().After(deadline) || strings.Contains(logs.String(), "failed to load zone") {
			t.Fatalf("knotd did not serve %s within 30 s:\n%s", apex, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// reply is what kdig showed of an answer.
type reply struct {
	status string
	aa     bool
	answer []string // sorted, one record a line, blanks normalised
	raw    string
}

// kdig asks 127.0.0.1:port one question without recursion.
func kdig(t *testing.T, port int, args ...string) reply {
	t.Helper()
	a := append([]string{"@127.0.0.1", "-p", strconv.Itoa(port), "+norec", "+time=5", "+retry=2"}, args...)
	out, _ := exec.Command("kdig", a...).CombinedOutput()
	return parseKdig(string(out))
}

func parseKdig(out string) reply {
	r := reply{raw: out}
	section := ""
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, ";; ->>HEADER<<-"):
			if i := strings.Index(line, "status: "); i >= 0 {
				r.status = strings.TrimSuffix(strings.Fields(line[i+len("status: "):])[0], ";")
			}
		case strings.HasPrefix(line, ";; Flags:"):
			flags, _, _ := strings.Cut(strings.TrimPrefix(line, ";; Flags:"), ";")
			r.aa = slices.Contains(strings.Fields(flags), "aa")
		case strings.HasPrefix(line, ";; ANSWER SECTION:"):
			section = "answer"
		case strings.HasPrefix(line, ";;"), line == "":
			section = ""
		case section == "answer":
			r.answer = append(r.answer, strings.Join(strings.Fields(strings.ToLower(line)), " "))
		}
	}
	slices.Sort(r.answer)
	return r
}

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
	needTool(t, "kdig", "knot-dnsutils")
	path, err := filepath.Abs("testdata/bind.zone")
	if err != nil {
		t.Fatal(err)
	}
	z := zoneFromFile(t, path)
	knotFile := knotCopy(t, path)
	cfg := pools.NewConfig()
	cfg.Zones = []pools.Zone{*z}
	glb := serveGLB(t, cfg)
	knot := startKnot(t, func(string) string {
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

	// glb's export of the zone, loaded by a second Knot, answers the same.
	var exp bytes.Buffer
	if err := zonefile.Export(&exp, z, nil); err != nil {
		t.Fatal(err)
	}
	expFile := filepath.Join(t.TempDir(), "export.zone")
	if err := os.WriteFile(expFile, exp.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	reload := startKnot(t, func(string) string {
		return "zone:\n  - domain: move.example\n    file: " + expFile + "\n    zonefile-sync: -1\n    journal-content: none\n"
	}, "move.example")

	for _, c := range qs {
		g := kdig(t, glb, c.name, c.typ)
		k := kdig(t, knot.Port, c.name, c.typ)
		if g.status != k.status || g.aa != k.aa || !slices.Equal(g.answer, k.answer) {
			t.Errorf("%s %s:\nglb  %s aa=%v %q\nknot %s aa=%v %q", c.name, c.typ, g.status, g.aa, g.answer, k.status, k.aa, k.answer)
		}
		if k.status == "" {
			t.Errorf("%s %s: no answer from knot:\n%s", c.name, c.typ, k.raw)
		}
		if c.typ == "SOA" && !g.aa {
			t.Errorf("%s SOA without AA", c.name)
		}
		e := kdig(t, reload.Port, c.name, c.typ)
		if e.status != k.status || e.aa != k.aa || !slices.Equal(e.answer, k.answer) {
			t.Errorf("%s %s from glb's export:\nexport %s aa=%v %q\nfile   %s aa=%v %q", c.name, c.typ, e.status, e.aa, e.answer, k.status, k.aa, k.answer)
		}
	}
	t.Logf("%d questions on %d types", len(qs), len(types))
}
