// Package knottest runs Knot DNS (knotd, kdig) for tests that compare glb
// with it or make it glb's secondary. Outside CI a missing tool skips the
// test; in CI, where scripts/install-deps.sh installs it, it fails.
package knottest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/glb-dns/glb/internal/testnode"
)

// NeedTool skips a test whose tool is missing outside CI and fails it in
// CI, where scripts/install-deps.sh installs it.
func NeedTool(t *testing.T, name, pkg string) string {
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

// FreePort returns a port on 127.0.0.1 free for TCP and UDP a moment
// ago, for a server (knotd) that cannot be told to pick one itself.
func FreePort(t *testing.T) int {
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

// Start runs knotd on 127.0.0.1 with a config of its own in a
// temporary directory; conf is appended to the server section (zones,
// keys, ACLs). It returns once knotd answers the SOA of apex.
func Start(t *testing.T, conf func(dir string) string, apex string) *Knot {
	t.Helper()
	return StartAt(t, FreePort(t), conf, apex)
}

// StartAt is Start on a port the caller chose (FreePort), for a test that
// must name Knot's port before Knot runs.
func StartAt(t *testing.T, port int, conf func(dir string) string, apex string) *Knot {
	t.Helper()
	knotd := NeedTool(t, "knotd", "knot")
	dir := t.TempDir()
	k := &Knot{Port: port, Dir: dir}
	cfg := fmt.Sprintf("server:\n    listen: 127.0.0.1@%d\n    rundir: %s\n\nlog:\n  - target: stderr\n    any: info\n\ndatabase:\n    storage: %s\n\ncontrol:\n    listen: %s\n\n%s",
		k.Port, dir, dir, filepath.Join(dir, "knot.sock"), conf(dir))
	if err := os.WriteFile(filepath.Join(dir, "knot.conf"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	// knotd writes while the loop below reads: the log is read under the
	// same lock its writes take.
	logs := &testnode.Logs{}
	cmd := exec.Command(knotd, "-c", filepath.Join(dir, "knot.conf"))
	cmd.Stdout, cmd.Stderr = logs, logs
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
		r := Kdig(t, k.Port, apex, "SOA")
		if r.Status == "NOERROR" && len(r.Answer) == 1 {
			return k
		}
		if time.Now().After(deadline) || strings.Contains(logs.String(), "failed to load zone") {
			t.Fatalf("knotd did not serve %s within 30 s:\n%s", apex, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Reply is what kdig showed of an answer.
type Reply struct {
	Status string
	AA     bool
	Answer []string // sorted, one record a line, blanks normalised
	Raw    string
}

// Kdig asks 127.0.0.1:port one question without recursion.
func Kdig(t *testing.T, port int, args ...string) Reply {
	t.Helper()
	a := append([]string{"@127.0.0.1", "-p", strconv.Itoa(port), "+norec", "+time=5", "+retry=2"}, args...)
	out, _ := exec.Command("kdig", a...).CombinedOutput()
	return ParseKdig(string(out))
}

func ParseKdig(out string) Reply {
	r := Reply{Raw: out}
	section := ""
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, ";; ->>HEADER<<-"):
			if i := strings.Index(line, "status: "); i >= 0 {
				r.Status = strings.TrimSuffix(strings.Fields(line[i+len("status: "):])[0], ";")
			}
		case strings.HasPrefix(line, ";; Flags:"):
			flags, _, _ := strings.Cut(strings.TrimPrefix(line, ";; Flags:"), ";")
			r.AA = slices.Contains(strings.Fields(flags), "aa")
		case strings.HasPrefix(line, ";; ANSWER SECTION:"):
			section = "answer"
		case strings.HasPrefix(line, ";;"), line == "":
			section = ""
		case section == "answer":
			r.Answer = append(r.Answer, strings.Join(strings.Fields(strings.ToLower(line)), " "))
		}
	}
	slices.Sort(r.Answer)
	return r
}
