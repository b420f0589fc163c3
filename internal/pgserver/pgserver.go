// Package pgserver finds what it takes to run a throwaway PostgreSQL
// server of this machine's own: the server binaries, and the user to run
// them as under root. The tests' clusters (pools/postgres/pgtest) and the
// lab's run them alike.
package pgserver

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Binaries finds the directory holding every one of the programs named
// (initdb, postgres, pg_ctl…): where initdb on PATH is, else the newest
// Debian/Ubuntu server package (/usr/lib/postgresql/<major>/bin, not on
// PATH there).
func Binaries(names ...string) (string, error) {
	have := func(dir string) bool {
		for _, name := range names {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				return false
			}
		}
		return true
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if p, err = filepath.EvalSymlinks(p); err == nil && have(filepath.Dir(p)) {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return majorOf(b) - majorOf(a) })
	for _, d := range dirs {
		if have(d) {
			return d, nil
		}
	}
	return "", fmt.Errorf("no PostgreSQL server binaries (%s) on PATH or in /usr/lib/postgresql/*/bin; "+
		"install them (Debian/Ubuntu: apt-get install postgresql, or scripts/install-deps.sh)", strings.Join(names, ", "))
}

// majorOf reads the major version from /usr/lib/postgresql/<major>/bin.
func majorOf(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// User is the credential of the postgres user, which the server runs as
// when this process is root (PostgreSQL refuses to run as root).
func User() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, PostgreSQL needs the postgres user to run as: %w", err)
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return nil, fmt.Errorf("postgres uid %q: %w", u.Uid, err)
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return nil, fmt.Errorf("postgres gid %q: %w", u.Gid, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}
