package main

import (
	neturl "net/url"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/glb-dns/glb/internal/birdtest"
)

// TestAnycastGlbdBird runs glbd with BGP against a real BIRD 2 on
// loopback: its prefix is announced once it answers, with its community
// and MED, and GET /nodes shows the session and the prefix; a drain
// withdraws it at once and the undrain announces it again; on SIGTERM it
// is withdrawn while the node still answers for its drain grace, and the
// session closes when the node exits.
func TestAnycastGlbdBird(t *testing.T) {
	t.Parallel()
	bird := birdtest.Start(t, birdtest.Config{Local: "127.0.0.2", ASN: 65000,
		Neighbors: []birdtest.Neighbor{{Name: "glb1", Addr: "127.0.0.1", ASN: 65001}}})
	const route = "192.0.2.53/32"
	g := startParallelBGP(t, "--node", "n1", "--bgp-asn", "65001", "--bgp-router-id", "192.0.2.1",
		"--bgp-peer", "127.0.0.2:"+strconv.Itoa(bird.Port)+",65000", "--anycast", "192.0.2.53",
		"--bgp-community", "65001:53", "--bgp-med", "5", "--bgp-hold-time", "3s", "--drain-grace", "3s")
	r, took := bird.WaitRoute(t, route, true, 15*time.Second)
	t.Logf("announced %v after glbd listened", took)
	if r.Community != "(65001,53)" || r.MED != "5" {
		t.Errorf("route as bird holds it: %+v, want community (65001,53), med 5", r)
	}
	eventually(t, 5*time.Second, "GET /nodes shows the session and the prefix", func() (bool, string) {
		v, _ := nodeNamed(g.nodes(), "n1")
		ok := len(v.BGP.Sessions) == 1 && v.BGP.Sessions[0].State == "established" && v.BGP.Sessions[0].ASN == 65000 &&
			v.BGP.Sessions[0].Peer == "127.0.0.2" && len(v.BGP.Announced) == 1 && v.BGP.Announced[0] == route
		return ok, describeBGP(v)
	})

	drained := time.Now()
	if st := g.call("POST", "/api/v1/nodes/n1/drain", map[string]any{"reason": "test"}, nil); st != 200 {
		t.Fatalf("drain: %d", st)
	}
	// Asked through the node's own API, the drain reaches it at once, not
	// at its next report: withdrawn within the second.
	bird.WaitRoute(t, route, false, time.Second)
	t.Logf("withdrawn %v after the drain was asked", time.Since(drained))
	eventually(t, 5*time.Second, "GET /nodes shows nothing announced", func() (bool, string) {
		v, _ := nodeNamed(g.nodes(), "n1")
		return len(v.BGP.Announced) == 0 && len(v.BGP.Sessions) == 1 && v.BGP.Sessions[0].State == "established", describeBGP(v)
	})
	if st := g.call("DELETE", "/api/v1/nodes/n1/drain", nil, nil); st != 200 {
		t.Fatalf("undrain: %d", st)
	}
	bird.WaitRoute(t, route, true, 5*time.Second)

	// SIGTERM: withdrawn first, answering on for the grace, then gone.
	termed := time.Now()
	if err := g.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	bird.WaitRoute(t, route, false, 2*time.Second)
	withdrawn := time.Since(termed)
	if _, status := dig(t, g.dns, "glb.example.com", "SOA"); status == "" || status[:5] == "error" {
		t.Errorf("no answer %v after SIGTERM, inside the 3 s drain grace: %s", time.Since(termed), status)
	}
	select {
	case <-g.done:
	case <-time.After(10 * time.Second):
		t.Fatal("glbd did not exit 10 s after SIGTERM")
	}
	exited := time.Since(termed)
	t.Logf("SIGTERM: withdrawn after %v, exited after %v", withdrawn, exited)
	if exited < 3*time.Second {
		t.Errorf("exited %v after SIGTERM, before its 3 s drain grace", exited)
	}
	eventually(t, 2*time.Second, "session closed by glbd's exit", func() (bool, string) {
		return !bird.Established("glb1"), ""
	})
}

// startParallelBGP starts glbd beside the other tests with the embedded
// store and a zone, so that its self-probe asks a zone's SOA.
func startParallelBGP(t *testing.T, args ...string) *glbd {
	t.Helper()
	g := startGlbd(t, "", args...)
	g.must("POST", "/api/v1/zones", map[string]any{"name": "glb.example.com", "nameservers": []string{"ns1.glb.example.com"}})
	return g
}

func describeBGP(v nodeView) string {
	return strconv.Quote(v.State) + " " + strconv.Itoa(len(v.BGP.Sessions)) + " sessions " + func() string {
		s := ""
		for _, x := range v.BGP.Sessions {
			s += x.Peer + "/" + strconv.Itoa(int(x.ASN)) + "/" + x.State + " "
		}
		return s
	}() + "announced " + func() string {
		s := ""
		for _, p := range v.BGP.Announced {
			s += p + " "
		}
		return s
	}()
}

// TestAnycastStaticStability: two nodes on PostgreSQL, each announcing
// its own prefix to a BIRD of its own, are cut from the store (a proxy
// drops their connections and refuses new ones). s1, with --max-stale
// off (the default), answers from its snapshot and keeps announcing
// however long the cut lasts; s2, with --max-stale 3s, answers as well
// but withdraws once its snapshot is older than that, not before, and
// announces again once it reads the store.
func TestAnycastStaticStability(t *testing.T) {
	t.Parallel()
	url := freshDatabase(t)
	u, _ := neturl.Parse(url)
	p := newCutProxy(t, u.Host)
	proxied := strings.Replace(url, u.Host, p.ln.Addr().String(), 1)
	const maxStale = 3 * time.Second
	routers := map[string]*birdtest.Bird{}
	prefix := map[string]string{"s1": "192.0.2.61/32", "s2": "192.0.2.62/32"}
	nodes := map[string]*glbd{}
	for _, name := range []string{"s1", "s2"} {
		routers[name] = birdtest.Start(t, birdtest.Config{Local: "127.0.0.2", ASN: 65000,
			Neighbors: []birdtest.Neighbor{{Name: name, Addr: "127.0.0.1", ASN: 65001}}})
		args := []string{"--database-url", proxied, "--node", name, "--bgp-asn", "65001", "--bgp-router-id", "192.0.2.1",
			"--bgp-peer", "127.0.0.2:" + strconv.Itoa(routers[name].Port) + ",65000", "--anycast", prefix[name], "--bgp-hold-time", "3s"}
		if name == "s2" {
			args = append(args, "--migrate=false", "--max-stale", maxStale.String())
		}
		nodes[name] = startGlbd(t, "", args...)
	}
	nodes["s1"].must("POST", "/api/v1/zones", map[string]any{"name": "glb.example.com", "nameservers": []string{"ns1.glb.example.com"}})
	for name, b := range routers {
		b.WaitRoute(t, prefix[name], true, 15*time.Second)
	}
	// Both serve the zone, so that what they answer from during the cut is
	// their snapshot of it.
	for _, g := range nodes {
		eventually(t, 5*time.Second, "the zone served", func() (bool, string) {
			_, status := dig(t, g.dns, "glb.example.com", "SOA")
			return status == "NOERROR", status
		})
	}

	p.setCut(true)
	cut := time.Now()
	// s2's snapshot was confirmed by its last revision read, at most the
	// poll's 2 s before the cut; it withdraws at the self-probe (every
	// second) after the snapshot is maxStale old.
	_, took := routers["s2"].WaitRoute(t, prefix["s2"], false, maxStale+3*time.Second)
	if took < maxStale-2*time.Second {
		t.Errorf("s2 withdrew %v after the cut, before its snapshot could be %v old", took, maxStale)
	}
	t.Logf("s2 (--max-stale %v) withdrew %v after the cut", maxStale, took)
	// s1 holds its route three times as long, answering meanwhile.
	for time.Since(cut) < 3*maxStale {
		if r, err := routers["s1"].Routes(); err != nil || r[prefix["s1"]].Prefix == "" {
			t.Fatalf("s1 (--max-stale off) withdrew %v into the cut: %v %v", time.Since(cut), r, err)
		}
		for name, g := range nodes {
			if _, status := dig(t, g.dns, "glb.example.com", "SOA"); status != "NOERROR" {
				t.Fatalf("%s answers %s %v into the cut, want its snapshot's SOA", name, status, time.Since(cut))
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !strings.Contains(nodes["s2"].logs.String(), "snapshot older than --max-stale") {
		t.Errorf("s2 does not say why it withdrew")
	}

	p.setCut(false)
	_, back := routers["s2"].WaitRoute(t, prefix["s2"], true, 10*time.Second)
	t.Logf("s2 announced again %v after the store came back", back)
	routers["s1"].WaitRoute(t, prefix["s1"], true, 0)
}
