//go:build linux

// Package xdplab builds, for tests, two network namespaces joined by a
// veth pair: a server side and a client side, with IPv4 addresses in
// 198.18.0.0/15 and IPv6 ones in 2001:2::/48 (both reserved for
// benchmarking). It needs root and iproute2; New skips the test
// otherwise.
package xdplab

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// Lab is a pair of namespaces joined by a veth pair.
type Lab struct {
	// Server and Client are the namespaces' names (ip netns).
	Server, Client string
	// ServerIf and ClientIf are the veth ends in them.
	ServerIf, ClientIf string
	// Addresses of the two ends.
	Server4, Client4, Server6, Client6 netip.Addr
}

var seq atomic.Int32

// New builds a lab, removed when the test ends. The client end sends
// complete checksums (tx offload off): a veth otherwise leaves them to
// an offload that never happens for frames an XDP program takes.
func New(t testing.TB) *Lab {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: builds network namespaces and a veth pair")
	}
	for _, tool := range []string{"ip", "ethtool"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s (scripts/install-deps.sh installs it)", tool)
		}
	}
	n := seq.Add(1)
	tag := fmt.Sprintf("%d%d", os.Getpid()%100000, n)
	l := &Lab{
		Server: "glbxs" + tag, Client: "glbxc" + tag,
		ServerIf: "xs" + tag, ClientIf: "xc" + tag,
		Server4: netip.MustParseAddr("198.18.0.1"), Client4: netip.MustParseAddr("198.18.0.2"),
		Server6: netip.MustParseAddr("2001:2::1"), Client6: netip.MustParseAddr("2001:2::2"),
	}
	t.Cleanup(func() {
		_ = exec.Command("ip", "netns", "del", l.Server).Run()
		_ = exec.Command("ip", "netns", "del", l.Client).Run()
	})
	steps := [][]string{
		{"ip", "netns", "add", l.Server},
		{"ip", "netns", "add", l.Client},
		{"ip", "link", "add", l.ServerIf, "netns", l.Server, "type", "veth", "peer", "name", l.ClientIf, "netns", l.Client},
		{"ip", "-n", l.Server, "link", "set", "lo", "up"},
		{"ip", "-n", l.Client, "link", "set", "lo", "up"},
		{"ip", "-n", l.Server, "addr", "add", l.Server4.String() + "/24", "dev", l.ServerIf},
		{"ip", "-n", l.Client, "addr", "add", l.Client4.String() + "/24", "dev", l.ClientIf},
		{"ip", "-n", l.Server, "addr", "add", l.Server6.String() + "/64", "dev", l.ServerIf, "nodad"},
		{"ip", "-n", l.Client, "addr", "add", l.Client6.String() + "/64", "dev", l.ClientIf, "nodad"},
		{"ip", "-n", l.Server, "link", "set", l.ServerIf, "up"},
		{"ip", "-n", l.Client, "link", "set", l.ClientIf, "up"},
		{"ip", "netns", "exec", l.Client, "ethtool", "-K", l.ClientIf, "tx", "off"},
	}
	for _, s := range steps {
		if out, err := exec.Command(s[0], s[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(s, " "), err, out)
		}
	}
	return l
}

// Do runs f on a thread in namespace ns: sockets f opens, and programs
// it attaches, belong to that namespace. f must not call t.Fatal.
func Do(ns string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- err
			return
		}
		defer unix.Close(orig)
		target, err := unix.Open("/run/netns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- err
			return
		}
		defer unix.Close(target)
		if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
			errc <- err
			return
		}
		err = f()
		// A thread that cannot go back ends with this goroutine.
		if unix.Setns(orig, unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		errc <- err
	}()
	return <-errc
}

// Run runs a command in namespace ns and returns its combined output.
func Run(ns string, args ...string) (string, error) {
	out, err := exec.Command("ip", append([]string{"netns", "exec", ns}, args...)...).CombinedOutput()
	return string(out), err
}

// XDPAttached tells whether an XDP program is attached to the lab's
// server end.
func (l *Lab) XDPAttached() (bool, error) {
	out, err := exec.Command("ip", "-n", l.Server, "-d", "link", "show", "dev", l.ServerIf).CombinedOutput()
	if err != nil {
		return false, fmt.Errorf("ip link show: %v: %s", err, out)
	}
	return strings.Contains(string(out), "prog/xdp"), nil
}
