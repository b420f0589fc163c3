package main

import (
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var cookieLine = regexp.MustCompile(`; COOKIE: ([0-9a-f]+)(?: \((\w+)\))?`)

// truncatedReply matches the flags line of a reply with TC set.
var truncatedReply = regexp.MustCompile(`(?m)^;; flags:[a-z ]* tc[ ;]`)

// digRaw runs dig and returns its whole output.
func digRaw(t *testing.T, server string, args ...string) string {
	t.Helper()
	host, port := splitHostPort(t, server)
	out, err := exec.Command("dig", append([]string{"@" + host, "-p", port, "+norec", "+time=2", "+tries=1"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("dig %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestEdgeTwoNodesShareCookies: a server cookie from one node is good on
// another node of the same PostgreSQL store (the secret is in the store),
// and each node tells its own name by NSID.
func TestEdgeTwoNodesShareCookies(t *testing.T) {
	t.Parallel()
	a, b := startTwoNodes(t)
	configure(t, a)
	answersWithin(t, b, "configuration on node b", "192.0.2.1", "192.0.2.2", "192.0.2.3")

	out := digRaw(t, a.dns, "+cookie", "www.glb.example.com", "A")
	m := cookieLine.FindStringSubmatch(out)
	if m == nil || len(m[1]) != 48 {
		t.Fatalf("node a sent no server cookie:\n%s", out)
	}
	for _, g := range []*glbd{a, b} {
		// Both nodes read the secret from the store soon after start.
		eventually(t, 10*time.Second, "cookie good on "+g.dns, func() (bool, string) {
			out := digRaw(t, g.dns, "+cookie="+m[1], "www.glb.example.com", "A")
			r := cookieLine.FindStringSubmatch(out)
			valid := metricValue(t, g, `glb_dns_cookies_total{result="valid"}`)
			return r != nil && r[2] == "good" && valid > 0, out
		})
	}
	for _, g := range []struct {
		g    *glbd
		name string
	}{{a, "a"}, {b, "b"}} {
		out := digRaw(t, g.g.dns, "+nsid", "www.glb.example.com", "A")
		if !strings.Contains(out, `("`+g.name+`")`) {
			t.Errorf("dig +nsid does not show node %s:\n%s", g.name, out)
		}
	}
}

// metricValue scrapes one sample of the node's /metrics; -1 if absent.
func metricValue(t *testing.T, g *glbd, sample string) float64 {
	t.Helper()
	resp, err := http.Get(g.api + "/metrics")
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if rest, ok := strings.CutPrefix(line, sample+" "); ok {
			v, err := strconv.ParseFloat(rest, 64)
			if err != nil {
				t.Fatalf("metric %s: %v", line, err)
			}
			return v
		}
	}
	return -1
}

// TestEdgeSeveralListenersAndRRLFlags: --dns-listen takes a list, each
// address answers over UDP and TCP; the RRL flags and --udp-sockets reach
// the server.
func TestEdgeSeveralListenersAndRRLFlags(t *testing.T) {
	g := startParallel(t, "--dns-listen", "127.0.0.1:0,[::1]:0", "--udp-sockets", "3", "--rrl-rate", "1", "--rrl-slip", "1", "--version-string", "glb-test")
	configure(t, g)
	addrs := strings.Split(g.dns, ",")
	if len(addrs) != 2 {
		t.Fatalf("listening on %q, want two addresses", g.dns)
	}
	if n := strings.Count(g.logs.String(), "udp_sockets=3"); n != 2 {
		t.Errorf("%d listeners logged udp_sockets=3, want 2:\n%s", n, g.logs.String())
	}
	for _, addr := range addrs {
		eventually(t, 5*time.Second, "answer on "+addr, func() (bool, string) {
			got, status := dig(t, addr, "www.glb.example.com", "A", "+tcp")
			return status == "NOERROR" && len(got) == 3, status
		})
		// Rate 1, slip 1: a burst over UDP gets truncated replies. The
		// burst is one dig run of ten queries, each sent as the last is
		// answered: a dig run per query costs a process start, which on a
		// loaded machine can take as long as the bucket takes to refill
		// (a second). Ten queries pass at most one plus the seconds they
		// span, so a burst shorter than 9 s sees a truncated reply.
		burst := []string{"+ignore", "+noedns"}
		for range 10 {
			burst = append(burst, "ns1.glb.example.com", "A")
		}
		out := digRaw(t, addr, burst...)
		if !truncatedReply.MatchString(out) {
			t.Errorf("%s: no truncated reply in a burst at --rrl-rate 1:\n%s", addr, out)
		}
		out = digRaw(t, addr, "CH", "TXT", "version.bind")
		if !strings.Contains(out, `"glb-test"`) {
			t.Errorf("version.bind on %s:\n%s", addr, out)
		}
	}
}
