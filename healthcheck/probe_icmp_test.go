package healthcheck

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/glb-dns/glb/pools"
	"golang.org/x/sys/unix"
)

func icmpMonitor(count, maxLoss int) pools.Monitor {
	m := monitor(pools.MonitorICMP)
	m.Count, m.MaxLoss = count, maxLoss
	m.Timeout = 10 // 1 s in test units: long enough for loopback, short for the silent host
	return m
}

// probeICMP pings address under m once.
func probeICMP(t *testing.T, address string, m pools.Monitor) result {
	t.Helper()
	p := pools.DefaultPool()
	p.ID = "pool-1"
	tg := newTarget(&p, newSpec(&m, testUnit), &pools.Origin{Name: "o1", Address: address})
	return check(t.Context(), newProber(tg, newClients(none)), tg.retries)
}

// Echo over loopback, IPv4 and IPv6, with whichever socket the process
// may open: every request answered, an RTT measured.
func TestICMPLoopback(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"127.0.0.1", "::1"} {
		r := probeICMP(t, addr, icmpMonitor(3, 0))
		if strings.HasPrefix(r.reason, "ICMP not permitted") {
			t.Skipf("%s: %s (neither an unprivileged ICMP socket nor a raw one here)", addr, r.reason)
		}
		if !r.healthy || r.reason != "" || r.rtt <= 0 {
			t.Errorf("%s: healthy=%v reason=%q rtt=%v", addr, r.healthy, r.reason, r.rtt)
		}
	}
}

// needRoot skips a test that makes network namespaces, saying so.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: makes network namespaces and veth links (run as root in CI)")
	}
}

// netns makes a named network namespace with its loopback up, removed
// when the test ends.
func netns(t *testing.T, name string) {
	t.Helper()
	sh(t, "ip", "netns", "add", name)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	sh(t, "ip", "-n", name, "link", "set", "lo", "up")
}

func sh(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
}

// inNetns runs fn on a locked OS thread inside the named namespace:
// sockets fn opens belong to that namespace.
func inNetns(t *testing.T, name string, fn func()) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // not unlocked: the thread ends with the goroutine
		f, err := os.Open("/run/netns/" + name)
		if err != nil {
			done <- err
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("setns %s: %w", name, err)
			return
		}
		fn()
		done <- nil
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Where net.ipv4.ping_group_range holds the process's group, the probe
// uses an unprivileged datagram socket, for IPv4 and IPv6 (the sysctl
// covers both), and it works.
func TestICMPDatagramSocket(t *testing.T) {
	needRoot(t)
	name := fmt.Sprintf("glbhc-dg-%d", os.Getpid())
	netns(t, name)
	inNetns(t, name, func() {
		// The sysctl is the namespace's: /proc/sys/net is the calling
		// thread's network namespace.
		if err := os.WriteFile("/proc/sys/net/ipv4/ping_group_range", []byte("0 2147483647"), 0); err != nil {
			t.Errorf("ping_group_range: %v", err)
			return
		}
		for _, addr := range []string{"127.0.0.1", "::1"} {
			p := newICMPProber(&target{spec: &spec{params: params{timeout: testUnit * 10}}, address: addr}, netip.Addr{}).(*icmpProber)
			c, err := p.listen(netip.MustParseAddr(addr))
			if err != nil {
				t.Errorf("%s: %v", addr, err)
				continue
			}
			if !c.datagram {
				t.Errorf("%s: a raw socket where a datagram one is allowed", addr)
			}
			_ = c.Close()
			if r := check(t.Context(), p, 0); !r.healthy || r.rtt <= 0 {
				t.Errorf("%s over a datagram socket: healthy=%v reason=%q", addr, r.healthy, r.reason)
			}
		}
	})
}

// A namespace host over veth answers; its link down, every request goes
// unanswered; a drop of some of them counts against max_loss; its link
// up again, it answers.
func TestICMPNamespaceHost(t *testing.T) {
	needRoot(t)
	checker, host := fmt.Sprintf("glbhc-c-%d", os.Getpid()), fmt.Sprintf("glbhc-h-%d", os.Getpid())
	netns(t, checker)
	netns(t, host)
	sh(t, "ip", "-n", checker, "link", "add", "vc", "type", "veth", "peer", "name", "vh", "netns", host)
	sh(t, "ip", "-n", checker, "addr", "add", "198.18.242.1/30", "dev", "vc")
	sh(t, "ip", "-n", host, "addr", "add", "198.18.242.2/30", "dev", "vh")
	sh(t, "ip", "-n", checker, "link", "set", "vc", "up")
	sh(t, "ip", "-n", host, "link", "set", "vh", "up")

	probe := func(m pools.Monitor) (r result) {
		inNetns(t, checker, func() { r = probeICMP(t, "198.18.242.2", m) })
		return r
	}
	if r := probe(icmpMonitor(3, 0)); !r.healthy || r.rtt <= 0 {
		t.Fatalf("host up: healthy=%v reason=%q rtt=%v", r.healthy, r.reason, r.rtt)
	}
	sh(t, "ip", "-n", host, "link", "set", "vh", "down")
	if r := probe(icmpMonitor(3, 0)); r.healthy || r.reason != "no echo reply in 1s (3 sent)" {
		t.Errorf("host's link down: healthy=%v reason=%q", r.healthy, r.reason)
	}
	sh(t, "ip", "-n", host, "link", "set", "vh", "up")
	if r := probe(icmpMonitor(3, 0)); !r.healthy {
		t.Errorf("host's link up again: healthy=%v reason=%q", r.healthy, r.reason)
	}

	// The host answers only the first two of every four requests.
	nft := exec.Command("ip", "netns", "exec", host, "nft", "-f", "-")
	nft.Stdin = strings.NewReader("table inet glbhc { chain in { type filter hook input priority 0; icmp type echo-request numgen inc mod 4 >= 2 drop; }; }\n")
	if out, err := nft.CombinedOutput(); err != nil {
		t.Fatalf("nft: %v: %s", err, out)
	}
	if r := probe(icmpMonitor(4, 50)); !r.healthy || r.reason != "2 of 4 echo requests unanswered" {
		t.Errorf("half lost, max_loss 50: healthy=%v reason=%q", r.healthy, r.reason)
	}
	if r := probe(icmpMonitor(4, 25)); r.healthy || r.reason != "2 of 4 echo requests unanswered, over max_loss 25%" {
		t.Errorf("half lost, max_loss 25: healthy=%v reason=%q", r.healthy, r.reason)
	}
}
