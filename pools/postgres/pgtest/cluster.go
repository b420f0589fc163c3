package pgtest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/glb-dns/glb/internal/pgserver"
)

// A throwaway cluster belongs to one test binary. go test runs every
// package's tests in a process of its own, several at once; a cluster per
// process needs no coordination between them (no shared lock, reference
// count or last-one-out shutdown to get wrong when a process is killed),
// and costs one initdb, a few seconds, per package that uses PostgreSQL.

// supervisor creates, runs and removes the cluster. It is a shell script
// rather than this process because its lifetime must outlast ours: it
// waits for end of file on its standard input, a pipe whose only writer is
// this process, and the kernel closes that pipe however the process ends
// (a passing run, a failed one, a panic, a timeout, SIGINT or SIGKILL).
// It then stops PostgreSQL and deletes the directory. It keeps the test
// binary's standard error open until it is done, so go test (which waits
// for the output of a test binary to close) returns only once the cluster
// is gone. It runs in a process group of its own, so a Ctrl-C at the
// terminal reaches the tests, not the cleanup.
const supervisor = `
set -u
dir=$1 bin=$2 port=$3
cleanup() {
	"$bin/pg_ctl" -D "$dir/data" -m immediate -w stop </dev/null >/dev/null 2>&1
	rm -rf "$dir"
}
trap '' INT HUP
if ! "$bin/initdb" -D "$dir/data" -U postgres -A trust -N -E UTF8 --locale=C --no-instructions </dev/null >"$dir/initdb.log" 2>&1; then
	cat "$dir/initdb.log" >&2
	rm -rf "$dir"
	exit 1
fi
# Durability is worthless here; speed is not.
if ! "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 120 \
	-o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
	start </dev/null >/dev/null 2>&1; then
	cat "$dir/postgres.log" >&2
	cleanup
	exit 1
fi
echo ready
cat >/dev/null
cleanup
`

// cluster is a running throwaway cluster.
type cluster struct {
	url string
	dir string // removed with the cluster
}

// startCluster starts a throwaway PostgreSQL cluster that lives as long as
// this process.
func startCluster() (cluster, error) {
	bin, err := pgserver.Binaries("initdb", "pg_ctl", "postgres")
	if err != nil {
		return cluster{}, err
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		// PostgreSQL refuses to run as root.
		if cred, err = pgserver.User(); err != nil {
			return cluster{}, err
		}
	}
	var lastErr error
	// The port is free when chosen but could be taken before PostgreSQL
	// binds it; another port then does.
	for range 3 {
		c, err := startClusterOnce(bin, cred)
		if err == nil {
			return c, nil
		}
		lastErr = err
	}
	return cluster{}, lastErr
}

func startClusterOnce(bin string, cred *syscall.Credential) (cluster, error) {
	port, err := freePort()
	if err != nil {
		return cluster{}, err
	}
	dir, err := os.MkdirTemp("", "glb-pgtest-")
	if err != nil {
		return cluster{}, fmt.Errorf("cluster directory: %w", err)
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return cluster{}, fmt.Errorf("cluster directory: %w", err)
		}
	}
	cmd := exec.Command("/bin/sh", "-c", supervisor, "pgtest-cluster", dir, bin, strconv.Itoa(port))
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		os.RemoveAll(dir)
		return cluster{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(dir)
		return cluster{}, err
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return cluster{}, fmt.Errorf("start cluster supervisor: %w", err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		stdin.Close()
		werr := cmd.Wait()
		os.RemoveAll(dir) // in case the supervisor could not
		return cluster{}, fmt.Errorf("throwaway PostgreSQL in %s did not start (%v, %v); its log is above", dir, err, werr)
	}
	// Never closed: the pipe closes when this process exits.
	keepOpen = append(keepOpen, stdin)
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return cluster{url: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port), dir: dir}, nil
}

// keepOpen holds the write ends of the supervisors' standard input, so
// that no finalizer closes them before the process exits.
var keepOpen []io.WriteCloser

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("choose a port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
