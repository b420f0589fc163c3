package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// dnstapReader builds the dnstap command of the dnstap project's Go
// module and starts it reading the Unix socket sock, in quiet text (one
// line per message, written as it arrives).
func dnstapReader(t *testing.T, sock string) func() []string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "dnstap")
	build := exec.Command("go", "build", "-o", bin, "github.com/dnstap/golang-dnstap/dnstap")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the dnstap reader: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-u", sock, "-q")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var mu sync.Mutex
	var lines []string
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			mu.Lock()
			lines = append(lines, sc.Text())
			mu.Unlock()
		}
	}()
	eventually(t, 10*time.Second, "the reader's socket", func() (bool, string) {
		_, err := os.Stat(sock)
		return err == nil, fmt.Sprint(err)
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), lines...)
	}
}

// askMany sends n queries, q0.tap.test. to q(n-1), one after the other
// from one UDP socket (so one of the node's sockets answers them all),
// and fails unless each is answered.
func askMany(t *testing.T, server string, n int) {
	t.Helper()
	conn, err := dns.Dial("udp", server)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for i := range n {
		m := new(dns.Msg)
		m.SetQuestion(fmt.Sprintf("q%d.tap.test.", i), dns.TypeA)
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		if err := conn.WriteMsg(m); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ReadMsg(); err != nil {
			t.Fatalf("query %d: %v", i, err)
		}
	}
}

// TestDnstapSampleReachesTheReader: with --dnstap-sample 10, the dnstap
// project's own reader decodes one exchange in ten, each an auth response
// to a query that was asked, and as many as the node says it sent. Each of
// the node's answering loops counts its own ten, so a run may end with up
// to one short sample per loop untapped.
func TestDnstapSampleReachesTheReader(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(t.TempDir(), "tap.sock")
	lines := dnstapReader(t, sock)
	g := startGlbd(t, "", "--dnstap", "unix:"+sock, "--dnstap-sample", "10", "--udp-sockets", "2")
	askMany(t, g.dns, 1000)
	var sent float64
	eventually(t, 20*time.Second, "every message sent at the reader", func() (bool, string) {
		sent = metricValue(t, g, `glb_dns_dnstap_messages_total{result="sent"}`)
		return sent >= 98 && float64(len(lines())) == sent, fmt.Sprintf("sent %v, read %d", sent, len(lines()))
	})
	if sent > 100 {
		t.Errorf("%v messages for 1000 queries at one in 10, want at most 100", sent)
	}
	seen := map[string]bool{}
	name := regexp.MustCompile(`"q(\d+)\.tap\.test\." IN A$`)
	for _, l := range lines() {
		m := name.FindStringSubmatch(l)
		if !strings.Contains(l, " AR ") || m == nil || seen[m[1]] {
			t.Fatalf("%q: want one AR (auth response) line per query asked", l)
		}
		seen[m[1]] = true
	}
	if d := metricValue(t, g, `glb_dns_dnstap_messages_total{result="dropped"}`); d != 0 {
		t.Errorf("%v dropped with a reader that reads", d)
	}
}

// TestDnstapStuckReaderCostsNoAnswer: a reader that accepts and never
// reads holds the writer; the node keeps answering every query and
// counts the messages it drops.
func TestDnstapStuckReaderCostsNoAnswer(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(t.TempDir(), "stuck.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var held []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, c) // never read
		}
	}()
	g := startGlbd(t, "", "--dnstap", "unix:"+sock)
	askMany(t, g.dns, 3000)
	eventually(t, 10*time.Second, "drops counted", func() (bool, string) {
		m := metricValue(t, g, `glb_dns_dnstap_messages_total{result="dropped"}`)
		// Held back from the drops: the ring's 1024 slots, the
		// output's queue of 64, the frame the encoder waits to queue and
		// the one the writer is retrying.
		return m >= 3000-1024-64-2, fmt.Sprint(m)
	})
}
