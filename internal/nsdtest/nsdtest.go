// Package nsdtest runs NSD for tests that make it glb's secondary. It
// shares knottest's tool check, ports and kdig: outside CI a missing nsd
// skips the test; in CI, where scripts/install-deps.sh installs it, it
// fails.
package nsdtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/glb-dns/glb/internal/knottest"
	"github.com/glb-dns/glb/internal/testnode"
)

// NSD is an nsd started for a test.
type NSD struct {
	Port int
	Dir  string
}

// StartAt runs nsd in the foreground on 127.0.0.1:port (knottest.FreePort)
// as the user running the test, with a config, zone files, transfer
// directory and pid file of its own in a temporary directory, and no
// database or xfrd state file. conf is
// appended after the server section (keys, patterns, zones) and may name
// files relative to that directory. It returns once nsd answers the SOA
// of apex: for a secondary zone, once its first transfer is in.
func StartAt(t *testing.T, port int, conf func(dir string) string, apex string) *NSD {
	t.Helper()
	nsd := knottest.NeedTool(t, "nsd", "nsd")
	dir := t.TempDir()
	n := &NSD{Port: port, Dir: dir}
	// username "" keeps the test's user (also root), chroot "" none; with
	// no logfile nsd -d logs to stderr.
	cfg := fmt.Sprintf(`server:
    ip-address: 127.0.0.1
    port: %d
    server-count: 1
    username: ""
    chroot: ""
    zonesdir: %q
    database: ""
    zonelistfile: "zone.list"
    xfrdfile: ""
    xfrdir: %q
    pidfile: "nsd.pid"
    verbosity: 2

remote-control:
    control-enable: no

%s`, port, dir, dir, conf(dir))
	if err := os.WriteFile(filepath.Join(dir, "nsd.conf"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := new(testnode.Logs)
	cmd := exec.Command(nsd, "-d", "-c", filepath.Join(dir, "nsd.conf"))
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		// TERM: nsd stops its server and xfrd children too.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("nsd log:\n%s", logs.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := knottest.Kdig(t, n.Port, apex, "SOA")
		if r.Status == "NOERROR" && len(r.Answer) == 1 {
			return n
		}
		select {
		case <-exited:
			t.Fatalf("nsd exited before serving %s:\n%s", apex, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("nsd did not serve %s within 30 s (last: %s):\n%s", apex, r.Status, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
