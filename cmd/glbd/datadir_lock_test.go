package main

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestSecondGlbdOnTheSameDataDir: a second glbd on a data directory a
// running one holds is refused at once, saying that another glbd (its pid)
// holds it, not with the embedded store's lock timeout; the first goes on
// serving.
func TestSecondGlbdOnTheSameDataDir(t *testing.T) {
	g := startParallel(t)
	cmd := exec.Command(glbdBin, "serve", "--dns-listen", "127.0.0.1:0", "--api-listen", "127.0.0.1:0", "--data-dir", g.dataDir)
	cmd.Env = append(cmd.Environ(), "GLB_DATABASE_URL=")
	out, err := cmd.CombinedOutput()
	if ee, _ := err.(*exec.ExitError); ee == nil || ee.ExitCode() != 1 {
		t.Fatalf("second glbd: %v, want exit 1\n%s", err, out)
	}
	want := "data dir " + g.dataDir + ": another glbd (pid " + strconv.Itoa(g.cmd.Process.Pid) + ") holds it"
	if n := strings.Count(string(out), want); n != 1 {
		t.Errorf("second glbd said %q %d times, want once:\n%s", want, n, out)
	}
	if strings.Contains(string(out), "timeout") || strings.Contains(string(out), "glb.db") {
		t.Errorf("second glbd speaks of the store's lock:\n%s", out)
	}
	if status := g.call("GET", "/api/v1/zones", nil, nil); status != 200 {
		t.Errorf("the first glbd answers %d after the second was refused", status)
	}
}
