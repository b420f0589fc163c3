package main

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// node is one glbd process of the lab, in its region's namespace.
type node struct {
	l       *lab
	region  int
	name    string // the node name, the region's code in lower case
	dataDir string // kept across restarts: the last good file lives here
	migrate bool
	role    string // the PostgreSQL role it logs in as
	cmd     *exec.Cmd
	done    <-chan error
}

func (n *node) addr() netip.Addr { return nodeAddr(n.region) }
func (n *node) api() string      { return "http://" + n.addr().String() + ":8080" }

const apiToken = "lab-token"

// start runs glbd and waits until its API says it serves a snapshot
// (/readyz), or, when the store is down, until DNS answers (a node
// started from its last good file).
func (n *node) start() error {
	logf, err := os.OpenFile(filepath.Join(n.l.dir, n.name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	a := n.addr().String()
	n.cmd = exec.Command(n.l.glbdBin, "serve",
		"--dns-listen", a+":53,"+anycastAddr.String()+":53", "--api-listen", a+":8080", "--udp-sockets", "1",
		"--api-token", apiToken, "--api-insecure-http",
		"--database-url", n.l.pg.url(n.role), fmt.Sprintf("--migrate=%t", n.migrate),
		"--node", n.name, "--region", regions[n.region], "--check-source", a,
		"--data-dir", n.dataDir, "--log-level", "info")
	n.cmd.Args = append(n.cmd.Args, bgpFlags(n.region)...)
	n.cmd.Env = []string{"PATH=" + os.Getenv("PATH")} // only what the lab passes
	n.cmd.Stdout, n.cmd.Stderr = logf, logf
	if n.done, err = startIn(n.l.regionNS(n.region), n.cmd); err != nil {
		return err
	}
	return nil
}

// waitServing waits until the node answers DNS for the lab's zone.
func (n *node) waitServing(within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		if n.l.client.probe(n.region) {
			return nil
		}
		select {
		case err := <-n.done:
			n.cmd = nil
			return fmt.Errorf("glbd %s exited (%v); its log: %s", n.name, err, n.logTail())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("glbd %s does not answer DNS within %v; its log: %s", n.name, within, n.logTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// logged says whether glbd has logged msg (in any of its runs).
func (n *node) logged(msg string) bool {
	b, _ := os.ReadFile(filepath.Join(n.l.dir, n.name+".log"))
	return strings.Contains(string(b), msg)
}

// count is how many times glbd has logged msg, over all its runs.
func (n *node) count(msg string) int {
	b, _ := os.ReadFile(filepath.Join(n.l.dir, n.name+".log"))
	return strings.Count(string(b), msg)
}

func (n *node) logTail() string {
	b, _ := os.ReadFile(filepath.Join(n.l.dir, n.name+".log"))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return "\n" + strings.Join(lines, "\n")
}

// stop shuts glbd down gracefully, killing it after 10 s.
func (n *node) stop() {
	if n.cmd == nil {
		return
	}
	stopGracefully(n.cmd, n.done, syscall.SIGTERM, 10*time.Second)
	n.cmd = nil
}

// kill ends glbd at once, as a crash or a power cut would.
func (n *node) kill() {
	if n.cmd == nil {
		return
	}
	_ = n.cmd.Process.Kill()
	<-n.done
	n.cmd = nil
}
