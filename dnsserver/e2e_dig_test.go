package dnsserver

import (
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// digReply is what the tests read from dig's output.
type digReply struct {
	status  string
	flags   []string
	opcode  string
	answer  []string // "name ttl class type rdata", whitespace collapsed
	auth    []string
	extra   []string // additional section, without the OPT
	hasOPT  bool
	version string
	ecs     string // "198.51.100.0/24/24"
	udp     string
	raw     string
}

var (
	headerRe = regexp.MustCompile(`opcode: (\w+), status: (\w+), id: \d+`)
	flagsRe  = regexp.MustCompile(`;; flags:([^;]*);`)
	ednsRe   = regexp.MustCompile(`; EDNS: version: (\d+), flags:[^;]*; udp: (\d+)`)
	ecsRe    = regexp.MustCompile(`; CLIENT-SUBNET: (\S+)`)
)

// dig runs dig against the server and parses its output.
func dig(t *testing.T, port string, args ...string) digReply {
	t.Helper()
	all := append([]string{"@127.0.0.1", "-p", port, "+norec", "+time=3", "+tries=1"}, args...)
	out, err := exec.Command("dig", all...).CombinedOutput()
	if err != nil {
		t.Fatalf("dig %v: %v\n%s", all, err, out)
	}
	r := digReply{raw: string(out)}
	if m := headerRe.FindStringSubmatch(r.raw); m != nil {
		r.opcode, r.status = m[1], m[2]
	} else {
		t.Fatalf("dig %v: no header in output:\n%s", all, out)
	}
	if m := flagsRe.FindStringSubmatch(r.raw); m != nil {
		r.flags = strings.Fields(m[1])
	}
	if m := ednsRe.FindStringSubmatch(r.raw); m != nil {
		r.hasOPT, r.version, r.udp = true, m[1], m[2]
	}
	if m := ecsRe.FindStringSubmatch(r.raw); m != nil {
		r.ecs = m[1]
	}
	sec := ""
	for _, line := range strings.Split(r.raw, "\n") {
		switch {
		case strings.HasPrefix(line, ";; ANSWER SECTION:"):
			sec = "answer"
		case strings.HasPrefix(line, ";; AUTHORITY SECTION:"):
			sec = "auth"
		case strings.HasPrefix(line, ";; ADDITIONAL SECTION:"):
			sec = "extra"
		case strings.HasPrefix(line, ";;"), line == "":
			sec = ""
		case sec == "answer":
			r.answer = append(r.answer, strings.Join(strings.Fields(line), " "))
		case sec == "auth":
			r.auth = append(r.auth, strings.Join(strings.Fields(line), " "))
		case sec == "extra":
			r.extra = append(r.extra, strings.Join(strings.Fields(line), " "))
		}
	}
	return r
}

func (r digReply) wantFlags(t *testing.T, want ...string) {
	t.Helper()
	r.wantSet(t, "flags", r.flags, want)
}

// wantSet checks that got holds what want holds, in any order.
func (r digReply) wantSet(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		t.Errorf("%s %q, want %q\n%s", what, got, want, r.raw)
	}
}

func (r digReply) wantStatus(t *testing.T, want string) {
	t.Helper()
	if r.status != want {
		t.Errorf("status %s, want %s\n%s", r.status, want, r.raw)
	}
}

func (r digReply) wantAnswer(t *testing.T, want ...string) {
	t.Helper()
	r.wantSet(t, "answer", r.answer, want)
}

// wantNoData: NOERROR, no answer and the zone's SOA in the authority.
func (r digReply) wantNoData(t *testing.T) {
	t.Helper()
	r.wantStatus(t, "NOERROR")
	r.wantAnswer(t)
	r.wantNegSOA(t)
}

// wantNegSOA: the authority section is the SOA of a negative answer, its
// TTL min(TTL, minimum).
func (r digReply) wantNegSOA(t *testing.T) {
	t.Helper()
	if !slices.Equal(r.auth, []string{digNegSOA}) {
		t.Errorf("authority %q", r.auth)
	}
}

const digNegSOA = "glb.example.com. 60 IN SOA ns1.glb.example.com. hostmaster.glb.example.com. 42 14400 3600 604800 60"

// digPort starts s for dig and returns its port; without dig on the
// machine the test fails.
func digPort(t *testing.T, s *Server) string {
	t.Helper()
	if _, err := exec.LookPath("dig"); err != nil {
		t.Fatalf("dig is required (Debian: bind9-dnsutils): %v", err)
	}
	return strconv.Itoa(int(startServer(t, s).Port()))
}

// TestDig drives a real server with dig, one behaviour per subtest.
func TestDig(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, prometheus.NewRegistry())
	port := digPort(t, s)

	t.Run("SOA at the apex, AA, no RA", func(t *testing.T) {
		r := dig(t, port, "glb.example.com", "SOA")
		r.wantStatus(t, "NOERROR")
		r.wantFlags(t, "qr", "aa")
		r.wantAnswer(t, "glb.example.com. 300 IN SOA ns1.glb.example.com. hostmaster.glb.example.com. 42 14400 3600 604800 60")
	})
	t.Run("RD copied when asked", func(t *testing.T) {
		r := dig(t, port, "+rec", "ns1.glb.example.com", "A")
		r.wantFlags(t, "qr", "aa", "rd")
	})
	t.Run("CD copied", func(t *testing.T) {
		r := dig(t, port, "+cdflag", "ns1.glb.example.com", "A")
		r.wantFlags(t, "qr", "aa", "cd")
	})
	t.Run("question case kept", func(t *testing.T) {
		r := dig(t, port, "NS1.GLB.example.com", "A")
		if !strings.Contains(r.raw, ";NS1.GLB.example.com.\t") {
			t.Errorf("question not echoed in its case:\n%s", r.raw)
		}
	})
	t.Run("NXDOMAIN with SOA at min(TTL, minimum)", func(t *testing.T) {
		r := dig(t, port, "nope.glb.example.com", "A")
		r.wantStatus(t, "NXDOMAIN")
		r.wantFlags(t, "qr", "aa")
		r.wantNegSOA(t)
	})
	t.Run("empty non-terminal NODATA", func(t *testing.T) {
		r := dig(t, port, "deep.glb.example.com", "A")
		r.wantNoData(t)
	})
	t.Run("REFUSED without AA outside the zones", func(t *testing.T) {
		r := dig(t, port, "example.org", "A")
		r.wantStatus(t, "REFUSED")
		r.wantFlags(t, "qr")
	})
	t.Run("AXFR refused", func(t *testing.T) {
		out, _ := exec.Command("dig", "@127.0.0.1", "-p", port, "glb.example.com", "AXFR").CombinedOutput()
		if !strings.Contains(string(out), "Transfer failed") {
			t.Errorf("AXFR not refused:\n%s", out)
		}
	})
	t.Run("ANY minimal", func(t *testing.T) {
		r := dig(t, port, "txt.glb.example.com", "ANY")
		r.wantAnswer(t, `txt.glb.example.com. 300 IN HINFO "RFC8482" ""`)
	})
	t.Run("unknown type NODATA", func(t *testing.T) {
		r := dig(t, port, "txt.glb.example.com", "TYPE65280")
		r.wantStatus(t, "NOERROR")
		r.wantAnswer(t)
	})
	t.Run("NOTIFY opcode NOTIMP with only QR", func(t *testing.T) {
		r := dig(t, port, "+opcode=notify", "+rec", "glb.example.com", "SOA")
		r.wantStatus(t, "NOTIMP")
		r.wantFlags(t, "qr")
		if r.opcode != "NOTIFY" || r.hasOPT {
			t.Errorf("opcode %s, OPT %v\n%s", r.opcode, r.hasOPT, r.raw)
		}
	})
	t.Run("no OPT without EDNS", func(t *testing.T) {
		r := dig(t, port, "+noedns", "ns1.glb.example.com", "A")
		if r.hasOPT {
			t.Errorf("OPT in reply to a query without one:\n%s", r.raw)
		}
	})
	t.Run("OPT version 0 and payload 1232", func(t *testing.T) {
		r := dig(t, port, "+bufsize=4096", "ns1.glb.example.com", "A")
		if !r.hasOPT || r.version != "0" || r.udp != "1232" {
			t.Errorf("OPT %v version %s udp %s\n%s", r.hasOPT, r.version, r.udp, r.raw)
		}
	})
	t.Run("BADVERS", func(t *testing.T) {
		r := dig(t, port, "+edns=1", "+noednsnegotiation", "ns1.glb.example.com", "A")
		r.wantStatus(t, "BADVERS")
		if !r.hasOPT || r.version != "0" {
			t.Errorf("OPT %v version %s\n%s", r.hasOPT, r.version, r.raw)
		}
	})
	t.Run("DO echoed", func(t *testing.T) {
		r := dig(t, port, "+dnssec", "ns1.glb.example.com", "A")
		if !regexp.MustCompile(`; EDNS: version: 0, flags: do;`).MatchString(r.raw) {
			t.Errorf("DO not echoed:\n%s", r.raw)
		}
	})
	t.Run("ECS scope from the deciding network", func(t *testing.T) {
		r := dig(t, port, "+subnet=198.51.100.0/24", "lb-geo.glb.example.com", "A")
		r.wantAnswer(t, "lb-geo.glb.example.com. 20 IN A 192.0.2.10")
		if r.ecs != "198.51.100.0/24/24" {
			t.Errorf("ECS %q, want 198.51.100.0/24/24\n%s", r.ecs, r.raw)
		}
	})
	t.Run("ECS US client", func(t *testing.T) {
		r := dig(t, port, "+subnet=203.0.113.0/24", "lb-geo.glb.example.com", "A")
		r.wantAnswer(t, "lb-geo.glb.example.com. 20 IN A 192.0.2.20")
	})
	t.Run("ECS scope 0 for static records", func(t *testing.T) {
		r := dig(t, port, "+subnet=198.51.100.0/24", "ns1.glb.example.com", "A")
		if r.ecs != "198.51.100.0/24/0" {
			t.Errorf("ECS %q, want 198.51.100.0/24/0\n%s", r.ecs, r.raw)
		}
	})
	t.Run("no ECS echoed without one", func(t *testing.T) {
		r := dig(t, port, "lb-geo.glb.example.com", "A")
		if r.ecs != "" {
			t.Errorf("ECS echoed: %q", r.ecs)
		}
		r.wantAnswer(t, "lb-geo.glb.example.com. 20 IN A 192.0.2.10") // 127.0.0.1 is a DE network
	})
	t.Run("TC over UDP, full over TCP", func(t *testing.T) {
		r := dig(t, port, "+ignore", "big.glb.example.com", "TXT")
		r.wantFlags(t, "qr", "aa", "tc")
		r.wantAnswer(t)
		r = dig(t, port, "+tcp", "big.glb.example.com", "TXT")
		r.wantFlags(t, "qr", "aa")
		if len(r.answer) != 10 {
			t.Errorf("%d TXT records over TCP, want 10", len(r.answer))
		}
	})
	t.Run("TC at 512 without EDNS", func(t *testing.T) {
		r := dig(t, port, "+ignore", "+noedns", "lb-all.glb.example.com", "AAAA")
		r.wantFlags(t, "qr", "aa", "tc")
	})
	t.Run("CNAME followed to a load balancer", func(t *testing.T) {
		r := dig(t, port, "+subnet=203.0.113.0/24", "www.glb.example.com", "A")
		r.wantAnswer(t, "www.glb.example.com. 300 IN CNAME lb-geo.glb.example.com.", "lb-geo.glb.example.com. 20 IN A 192.0.2.20")
		if r.ecs != "203.0.113.0/24/24" {
			t.Errorf("ECS %q", r.ecs)
		}
	})
	t.Run("load balancer NODATA", func(t *testing.T) {
		r := dig(t, port, "lb-v6.glb.example.com", "A")
		r.wantNoData(t)
	})
}
