package pgserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Cluster is a PostgreSQL cluster of this machine's own in a directory:
// a primary made by Init, or a streaming replica of one made by Replica.
// The caller stops it (Stop), as a test does in its cleanup; a process
// killed before leaves the server running in Dir.
type Cluster struct {
	// Dir holds the cluster: data/ and postgres.log.
	Dir  string
	Port int
	bin  string
	cred *syscall.Credential
}

// URL is a connection URL of the cluster's postgres database as the
// superuser postgres.
func (c *Cluster) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.Port)
}

// HostPort is 127.0.0.1:port, for multi-host URLs.
func (c *Cluster) HostPort() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(c.Port)) }

func (c *Cluster) data() string { return filepath.Join(c.Dir, "data") }

// Init creates a cluster in dir (which must not exist or be empty) that
// can feed streaming replicas; settings are extra postgresql.conf lines
// ("synchronous_commit = off"). It does not start it.
func Init(dir string, settings ...string) (*Cluster, error) {
	c, err := newCluster(dir)
	if err != nil {
		return nil, err
	}
	if out, err := c.run("initdb", "-D", c.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8",
		"--locale=C", "--no-instructions"); err != nil {
		return nil, fmt.Errorf("initdb: %w: %s", err, out)
	}
	return c, c.configure(append([]string{
		"wal_level = replica", "max_wal_senders = 10", "max_replication_slots = 10",
		"hot_standby = on", "max_connections = 400",
	}, settings...))
}

// Replica makes a streaming replica of c in dir with pg_basebackup -R
// (standby.signal and primary_conninfo written for it), on a port of its
// own; application_name names it in the primary's
// synchronous_standby_names. It does not start it.
func (c *Cluster) Replica(dir, applicationName string, settings ...string) (*Cluster, error) {
	r, err := newCluster(dir)
	if err != nil {
		return nil, err
	}
	conninfo := fmt.Sprintf("host=127.0.0.1 port=%d user=postgres application_name=%s", c.Port, applicationName)
	if out, err := r.run("pg_basebackup", "-D", r.data(), "-d", conninfo, "-R", "-X", "stream", "-c", "fast"); err != nil {
		return nil, fmt.Errorf("pg_basebackup: %w: %s", err, out)
	}
	return r, r.configure(settings)
}

func newCluster(dir string) (*Cluster, error) {
	bin, err := Binaries("initdb", "pg_ctl", "postgres", "pg_basebackup")
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, bin: bin}
	if os.Geteuid() == 0 {
		// PostgreSQL refuses to run as root.
		if c.cred, err = User(); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if c.cred != nil {
		if err := os.Chown(dir, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			return nil, err
		}
	}
	if c.Port, err = freePort(); err != nil {
		return nil, err
	}
	return c, nil
}

// configure appends settings, the port and the listening address to
// postgresql.auto.conf, which wins over postgresql.conf.
func (c *Cluster) configure(settings []string) error {
	lines := append([]string{
		"listen_addresses = '127.0.0.1'", fmt.Sprintf("port = %d", c.Port),
		fmt.Sprintf("unix_socket_directories = '%s'", c.Dir),
	}, settings...)
	f, err := os.OpenFile(filepath.Join(c.data(), "postgresql.auto.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString("\n" + strings.Join(lines, "\n") + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Start starts the server and waits until it accepts connections (a
// standby: until it accepts read-only ones).
func (c *Cluster) Start() error {
	if out, err := c.run("pg_ctl", "-D", c.data(), "-l", filepath.Join(c.Dir, "postgres.log"), "-w", "-t", "120", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.Dir, "postgres.log"))
		return fmt.Errorf("pg_ctl start: %w: %s\n%s", err, out, log)
	}
	return nil
}

// Stop stops the server at once (immediate mode) if it runs.
func (c *Cluster) Stop() error {
	if _, err := os.Stat(filepath.Join(c.data(), "postmaster.pid")); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	out, err := c.run("pg_ctl", "-D", c.data(), "-m", "immediate", "-w", "stop")
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %w: %s", err, out)
	}
	return nil
}

// Remove stops the server and deletes its directory.
func (c *Cluster) Remove() error {
	err := c.Stop()
	return errors.Join(err, os.RemoveAll(c.Dir))
}

// PID is the postmaster's process id, 0 when it does not run.
func (c *Cluster) PID() int {
	b, err := os.ReadFile(filepath.Join(c.data(), "postmaster.pid"))
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(line))
	return pid
}

// Kill ends the postmaster with SIGKILL, as a crash would: its backends
// notice and exit, nothing is shut down cleanly. It waits until the port
// is closed.
func (c *Cluster) Kill() error {
	pid := c.PID()
	if pid == 0 {
		return errors.New("not running")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		conn, err := net.DialTimeout("tcp", c.HostPort(), 100*time.Millisecond)
		if err != nil {
			return nil
		}
		conn.Close()
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("port still open 10 s after SIGKILL")
}

// Promote makes a standby a primary and waits until it is one.
func (c *Cluster) Promote() error {
	out, err := c.run("pg_ctl", "-D", c.data(), "-w", "-t", "60", "promote")
	if err != nil {
		return fmt.Errorf("pg_ctl promote: %w: %s", err, out)
	}
	return nil
}

// run runs a server program as the user the server runs as.
func (c *Cluster) run(prog string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, prog), args...)
	cmd.Dir = c.Dir
	cmd.Stdin = nil
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("choose a port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
