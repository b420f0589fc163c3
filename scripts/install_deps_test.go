package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeBin makes a directory of stand-ins for id (root), sleep (no wait,
// logged) and apt-get (logged; update fails on the lists lock the first
// busy times), to run install-deps.sh without root or a network.
func fakeBin(t *testing.T, busy int) (dir, log string) {
	t.Helper()
	dir = t.TempDir()
	log = filepath.Join(dir, "log")
	for name, body := range map[string]string{
		"id":    "echo 0",
		"sleep": `echo "sleep $*" >>` + log,
		"apt-get": `echo "apt-get $*" >>` + log + `
case "$*" in *" update "*)
	n=$(grep -c "update" ` + log + `)
	if [ "$n" -le ` + string(rune('0'+busy)) + ` ]; then
		echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)" >&2
		exit 100
	fi;;
esac`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir, log
}

func runInstallDeps(t *testing.T, bin string, env ...string) (string, error) {
	t.Helper()
	if _, err := os.Stat("/etc/os-release"); err != nil {
		t.Skip("no /etc/os-release")
	}
	cmd := exec.Command("sh", "install-deps.sh")
	cmd.Env = append(append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH")), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestInstallDepsWaitsForAptLocks: the lists lock another apt run holds
// is waited for, as the script promises, and every apt-get is given
// dpkg's lock timeout; a lock held past the wait fails saying so.
func TestInstallDepsWaitsForAptLocks(t *testing.T) {
	t.Parallel()
	bin, log := fakeBin(t, 2)
	out, err := runInstallDeps(t, bin)
	if err != nil {
		t.Fatalf("install-deps: %v\n%s", err, out)
	}
	b, _ := os.ReadFile(log)
	calls := strings.Split(strings.TrimSpace(string(b)), "\n")
	var updates, installs, sleeps int
	for _, c := range calls {
		switch {
		case strings.HasPrefix(c, "sleep"):
			sleeps++
			continue
		case strings.Contains(c, " update "):
			updates++
		case strings.Contains(c, " install "):
			installs++
		}
		if !strings.HasPrefix(c, "apt-get -o DPkg::Lock::Timeout=600 ") {
			t.Errorf("apt-get without the lock timeout: %q", c)
		}
	}
	if updates != 3 || installs != 1 || sleeps != 2 {
		t.Errorf("%d updates, %d installs, %d waits; want 3, 1, 2:\n%s", updates, installs, sleeps, b)
	}
	if !strings.Contains(out, "another apt run holds its lock; waiting up to 600s") {
		t.Errorf("the wait is not said:\n%s", out)
	}

	bin, _ = fakeBin(t, 9)
	out, err = runInstallDeps(t, bin, "GLB_APT_LOCK_WAIT=10")
	if err == nil || !strings.Contains(out, "another apt run held its lock for 10s") || !strings.Contains(out, "lists/lock") {
		t.Errorf("a lock held past the wait: %v\n%s", err, out)
	}
}
