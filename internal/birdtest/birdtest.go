// Package birdtest runs a real BIRD 2 router for tests: its own
// configuration, control socket and log in a temporary directory, no
// kernel protocol (it never touches the machine's routes), BGP sessions
// accepted passively on a port of its own, and what it learnt read back
// with birdc.
package birdtest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Neighbor is a BGP speaker the router accepts a session from.
type Neighbor struct {
	Name     string // the protocol's name in BIRD, e.g. "glb1"
	Addr     string
	ASN      uint32
	Password string
}

// Config is the router's configuration.
type Config struct {
	// Local is the address BIRD listens on (127.0.0.2 on loopback: the
	// speakers connect from 127.0.0.1).
	Local string
	// Port is the BGP port (0: a free one).
	Port      int
	ASN       uint32
	HoldTime  int // seconds; default 3
	Neighbors []Neighbor
}

// Bird is a running BIRD.
type Bird struct {
	Port int
	dir  string
	sock string
	cmd  *exec.Cmd
	mu   sync.Mutex
	log  bytes.Buffer
}

// Route is one route BIRD holds, with the BGP attributes read back.
type Route struct {
	Prefix    string
	From      string // the protocol it came from
	Community string
	MED       string
	NextHop   string
}

// Start starts BIRD with cfg and stops it when t ends. It fails t when
// the bird binary (Debian bird2) is missing.
func Start(t testing.TB, cfg Config) *Bird {
	t.Helper()
	findBird.Do(func() { birdBin, birdcBin = lookSbin("bird"), lookSbin("birdc") })
	if birdBin == "" || birdcBin == "" {
		t.Fatal("bird and birdc (Debian bird2) are needed: run sudo scripts/install-deps.sh")
	}
	if cfg.HoldTime == 0 {
		cfg.HoldTime = 3
	}
	if cfg.Port == 0 {
		cfg.Port = freePort(t, cfg.Local)
	}
	dir := t.TempDir()
	b := &Bird{Port: cfg.Port, dir: dir, sock: filepath.Join(dir, "bird.ctl")}
	conf := filepath.Join(dir, "bird.conf")
	if err := os.WriteFile(conf, []byte(Conf(cfg)), 0o644); err != nil {
		t.Fatal(err)
	}
	b.cmd = exec.Command(birdBin, "-f", "-c", conf, "-s", b.sock, "-P", filepath.Join(dir, "bird.pid"))
	b.cmd.Stdout, b.cmd.Stderr = (*lockedWriter)(b), (*lockedWriter)(b)
	if err := b.cmd.Start(); err != nil {
		t.Fatalf("start bird: %v", err)
	}
	t.Cleanup(func() {
		_ = b.cmd.Process.Kill()
		_ = b.cmd.Wait()
		if t.Failed() {
			t.Logf("bird's log:\n%s", b.Log())
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := b.Birdc("show status"); err == nil {
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("bird did not open its control socket in 10s; log:\n%s", b.Log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type lockedWriter Bird

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.log.Write(p)
}

// Log is what BIRD wrote so far.
func (b *Bird) Log() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.log.String()
}

// The binaries, found by Start: Debian puts them in /usr/sbin, which a
// user's PATH often lacks.
var (
	findBird          sync.Once
	birdBin, birdcBin string
)

func lookSbin(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if p := "/usr/sbin/" + name; fileExists(p) {
		return p
	}
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Conf is BIRD's configuration for cfg: passive sessions (the speakers
// connect), everything imported, nothing exported, no kernel protocol.
func Conf(cfg Config) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "log stderr all;\nrouter id 192.0.2.254;\nprotocol device {}\n")
	for _, n := range cfg.Neighbors {
		fam := "ipv4"
		if strings.Contains(n.Addr, ":") {
			fam = "ipv6"
		}
		fmt.Fprintf(&sb, "protocol bgp %s {\n  local %s port %d as %d;\n  neighbor %s as %d;\n", n.Name, cfg.Local, cfg.Port, cfg.ASN, n.Addr, n.ASN)
		fmt.Fprintf(&sb, "  passive on;\n  hold time %d;\n  multihop;\n", cfg.HoldTime)
		if n.Password != "" {
			fmt.Fprintf(&sb, "  password %q;\n", n.Password)
		}
		fmt.Fprintf(&sb, "  %s { import all; export none; };\n}\n", fam)
	}
	return sb.String()
}

func freePort(t testing.TB, host string) int {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatalf("free port on %s: %v", host, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Birdc runs one birdc command against this BIRD.
func (b *Bird) Birdc(cmd string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, birdcBin, append([]string{"-s", b.sock}, strings.Fields(cmd)...)...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("birdc %s: %v: %s", cmd, err, out)
	}
	return string(out), nil
}

// Routes are the routes BIRD holds, by prefix (the best one).
func (b *Bird) Routes() (map[string]Route, error) {
	out, err := b.Birdc("show route all")
	if err != nil {
		return nil, err
	}
	return ParseRoutes(out), nil
}

// ParseRoutes reads `birdc show route all`.
func ParseRoutes(out string) map[string]Route {
	routes := map[string]Route{}
	var cur *Route
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "BIRD ") || strings.HasPrefix(line, "Table ") {
			continue
		}
		f := strings.Fields(line)
		if line[0] != ' ' && line[0] != '\t' {
			// "PREFIX  unicast [proto time] * (100) [AS65001i]"; a second
			// route for the same prefix starts with blanks instead.
			r := Route{Prefix: f[0]}
			for _, w := range f {
				if strings.HasPrefix(w, "[") && !strings.HasPrefix(w, "[AS") {
					r.From = strings.TrimPrefix(w, "[")
					break
				}
			}
			if _, seen := routes[r.Prefix]; !seen {
				routes[r.Prefix] = r
				cur = &r
			} else {
				cur = nil
			}
			continue
		}
		if cur == nil || len(f) < 2 {
			continue
		}
		switch f[0] {
		case "BGP.community:":
			cur.Community = strings.Join(f[1:], " ")
		case "BGP.med:":
			cur.MED = f[1]
		case "BGP.next_hop:":
			cur.NextHop = f[1]
		}
		routes[cur.Prefix] = *cur
	}
	return routes
}

// Established reports whether the protocol's BGP session is up.
func (b *Bird) Established(name string) bool {
	out, err := b.Birdc("show protocols " + name)
	return err == nil && strings.Contains(out, "Established")
}

// WaitRoute waits until prefix is held (want) or not, failing t after
// within; it returns how long it took.
func (b *Bird) WaitRoute(t testing.TB, prefix string, want bool, within time.Duration) (Route, time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		routes, err := b.Routes()
		if err == nil {
			r, ok := routes[prefix]
			if ok == want {
				return r, time.Since(start)
			}
		}
		if time.Since(start) > within {
			out, _ := b.Birdc("show route all")
			t.Fatalf("route %s held=%v not reached in %v (err %v); bird has:\n%s", prefix, want, within, err, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
