//go:build linux

package main

import (
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/glb-dns/glb/dnsserver/xdp/xdplab"
)

// TestXDPGlbdAttachesAndDetaches: glbd with --xdp-interface in the
// server namespace of a veth lab answers dig from the client namespace
// through the XDP path (its metrics count the answers), and leaves no
// XDP program on the interface when stopped, nor when killed.
func TestXDPGlbdAttachesAndDetaches(t *testing.T) {
	lab := xdplab.New(t)
	wrap := []string{"ip", "netns", "exec", lab.Server}
	g := startGlbdWrapped(t, "", wrap, "--dns-listen", "[::]:0", "--xdp-interface", lab.ServerIf, "--xdp-required")
	if !strings.Contains(g.logs.String(), `msg="xdp attached"`) {
		t.Fatalf("no attach line in the logs:\n%s", g.logs.String())
	}
	_, port, err := net.SplitHostPort(g.dns)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []netip.Addr{lab.Server4, lab.Server6} {
		// Nothing is configured: REFUSED is the answer, from XDP.
		out, err := xdplab.Run(lab.Client, "dig", "+tries=1", "+time=5", "-p", port, "@"+a.String(), "www.example.com.", "A")
		if err != nil || !strings.Contains(out, "status: REFUSED") {
			t.Fatalf("dig @%s: %v\n%s", a, err, out)
		}
	}
	metrics := glbdMetrics(t, lab.Server, g.api)
	if !strings.Contains(metrics, `glb_xdp_frames_total{interface="`+lab.ServerIf+`",queue="0",result="answered"} 2`) {
		t.Errorf("want 2 answered frames on queue 0:\n%s", grepLines(metrics, "glb_xdp_"))
	}
	if on, err := lab.XDPAttached(); err != nil || !on {
		t.Fatalf("XDP program attached while glbd runs: %v, %v", on, err)
	}
	g.stop()
	if on, err := lab.XDPAttached(); err != nil || on {
		t.Fatalf("XDP program attached after glbd stopped: %v, %v", on, err)
	}
	if !strings.Contains(g.logs.String(), `msg="xdp detached"`) {
		t.Errorf("no detach line in the logs:\n%s", g.logs.String())
	}

	// Killed, glbd cannot detach: the kernel does, as the program hangs
	// on a link only the process holds.
	g = startGlbdWrapped(t, "", wrap, "--dns-listen", "[::]:0", "--xdp-interface", lab.ServerIf, "--xdp-required")
	if on, _ := lab.XDPAttached(); !on {
		t.Fatal("XDP program not attached at the second start")
	}
	_ = g.cmd.Process.Signal(syscall.SIGKILL)
	<-g.done
	deadline := time.Now().Add(5 * time.Second)
	for {
		on, err := lab.XDPAttached()
		if err == nil && !on {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("XDP program still attached 5 s after glbd was killed: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestXDPAttachFailureFallsBackToSockets: an interface that cannot take
// the program makes glbd say why and answer on its sockets; with
// --xdp-required it exits instead, saying why.
func TestXDPAttachFailureFallsBackToSockets(t *testing.T) {
	g := startParallel(t, "--xdp-interface", "nosuch0")
	if l := g.logs.String(); !strings.Contains(l, `msg="XDP path not attached; answering on kernel sockets only"`) || !strings.Contains(l, "interface=nosuch0") {
		t.Errorf("no line saying why XDP is off:\n%s", g.logs.String())
	}
	if _, status := dig(t, g.dns, "www.example.com.", "A"); status != "REFUSED" {
		t.Errorf("status %s over sockets, want REFUSED (nothing configured)", status)
	}

	out, err := runGlbd(t, "serve", "--dns-listen", "127.0.0.1:0", "--api-listen", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--xdp-interface", "nosuch0", "--xdp-required")
	if err == nil || !strings.Contains(out, `err="dns: --xdp-required: xdp: interface \"nosuch0\"`) {
		t.Errorf("glbd --xdp-required on a missing interface: %v, want an exit naming it\n%s", err, out)
	}
}

// runGlbd runs glbd to its end and returns its output.
func runGlbd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(glbdBin, args...)
	cmd.Env = append(os.Environ(), "GLB_DATABASE_URL=")
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("glbd did not exit within 30 s:\n%s", out)
	}
	return string(out), err
}

// glbdMetrics reads /metrics of a glbd whose API listens in namespace
// ns, over a connection opened there.
func glbdMetrics(t *testing.T, ns, api string) string {
	t.Helper()
	var body string
	err := xdplab.Do(ns, func() error {
		c, err := net.Dial("tcp", strings.TrimPrefix(api, "http://"))
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := fmt.Fprintf(c, "GET /metrics HTTP/1.0\r\nHost: glbd\r\n\r\n"); err != nil {
			return err
		}
		b, err := io.ReadAll(c)
		body = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

func grepLines(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
