package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/glb-dns/glb/internal/pgserver"
)

// postgres is the lab's throwaway PostgreSQL cluster, run by the lab
// itself (not pg_ctl, which would detach it) in the pg namespace, so
// that a drill can stop and start it and its exit is seen.
type postgres struct {
	ns, bin, dir string
	cred         *syscall.Credential
	cmd          *exec.Cmd
	done         <-chan error
}

// url is where a node logs in as role.
func (p *postgres) url(role string) string {
	return fmt.Sprintf("postgres://%s@%s:5432/postgres?sslmode=disable", role, pgAddr)
}

// exec runs SQL as the cluster's superuser, over its Unix socket (a file,
// so reachable from the machine's namespace).
func (p *postgres) exec(sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, fmt.Sprintf("host=%s port=5432 user=postgres dbname=postgres sslmode=disable", p.dir))
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("postgres: %s: %w", sql, err)
	}
	return nil
}

func newPostgres(ns, dir string) (*postgres, error) {
	bin, err := pgserver.Binaries("initdb", "postgres")
	if err != nil {
		return nil, err
	}
	p := &postgres{ns: ns, bin: bin, dir: dir}
	if os.Geteuid() == 0 {
		// PostgreSQL refuses to run as root.
		if p.cred, err = pgserver.User(); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if p.cred != nil {
		if err := os.Chown(dir, int(p.cred.Uid), int(p.cred.Gid)); err != nil {
			return nil, err
		}
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"), "-U", "postgres", "-A", "trust",
		"-N", "-E", "UTF8", "--locale=C", "--no-instructions")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	// The nodes connect from their own namespaces' addresses.
	hba, err := os.OpenFile(filepath.Join(dir, "data", "pg_hba.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	_, err = hba.WriteString("host all all 198.18.0.0/15 trust\n")
	if cerr := hba.Close(); err == nil {
		err = cerr
	}
	return p, err
}

// start runs the postmaster and waits until it accepts connections.
func (p *postgres) start() error {
	logPath := filepath.Join(p.dir, "postgres.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	// Durability is worthless here; speed is not.
	p.cmd = exec.Command(filepath.Join(p.bin, "postgres"), "-D", filepath.Join(p.dir, "data"),
		"-c", "listen_addresses="+pgAddr.String(), "-p", "5432", "-k", p.dir,
		"-c", "max_connections=100", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	if p.done, err = startIn(p.ns, p.cmd); err != nil {
		return err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(logPath)
		if strings.Contains(string(b), "database system is ready to accept connections") {
			return nil
		}
		select {
		case err := <-p.done:
			p.cmd = nil
			return fmt.Errorf("postgres exited at start (%v): %s", err, b)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres not ready within 60s: %s", b)
		}
	}
}

// stop shuts the postmaster down (fast shutdown: sessions are ended) and
// waits for it.
func (p *postgres) stop() {
	if p.cmd == nil {
		return
	}
	stopGracefully(p.cmd, p.done, syscall.SIGINT, 30*time.Second)
	p.cmd = nil
}
