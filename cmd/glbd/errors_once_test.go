package main

import (
	"net"
	"os/exec"
	"strings"
	"testing"
)

// TestErrorsPrintedOnce: a start that fails says why in one line, once,
// in the operator's words (flags and variables, not Go functions).
func TestErrorsPrintedOnce(t *testing.T) {
	t.Parallel()
	busy, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, c := range []struct {
		args []string
		env  string
		once string
		code int
	}{
		{[]string{"--bogus"}, "", "-bogus", 2},
		{[]string{"serve", "--dns-listen", busy.LocalAddr().String(), "--api-listen", "127.0.0.1:0", "--data-dir", t.TempDir()}, "",
			"listen udp " + busy.LocalAddr().String(), 1},
		{[]string{"serve", "--data-dir", t.TempDir()}, "GLB_MIGRATE=yes please", `GLB_MIGRATE "yes please": not true or false`, 2},
		{[]string{"serve", "--data-dir", t.TempDir()}, "GLB_RRL_RATE=ten", `GLB_RRL_RATE "ten": not a whole number`, 2},
	} {
		cmd := exec.Command(glbdBin, c.args...)
		if c.env != "" {
			cmd.Env = append(cmd.Environ(), c.env)
		}
		out, err := cmd.CombinedOutput()
		ee, _ := err.(*exec.ExitError)
		if ee == nil || ee.ExitCode() != c.code {
			t.Errorf("glbd %q: %v, want exit %d\n%s", c.args, err, c.code, out)
			continue
		}
		if n := strings.Count(string(out), c.once); n != 1 {
			t.Errorf("glbd %q: %q printed %d times, want once:\n%s", c.args, c.once, n, out)
		}
		for _, internal := range []string{"strconv.", "Usage of", "dnsserver:"} {
			if strings.Contains(string(out), internal) {
				t.Errorf("glbd %q printed %q:\n%s", c.args, internal, out)
			}
		}
	}
}
