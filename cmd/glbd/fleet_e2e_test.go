package main

import (
	"context"
	"debug/buildinfo"
	"fmt"
	"net"
	neturl "net/url"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/glb-dns/glb/internal/birdtest"
	"github.com/glb-dns/glb/pools"
)

// nodeView is a node as GET /nodes shows it.
type nodeView = pools.NodeView

func (g *glbd) nodes() []nodeView {
	g.t.Helper()
	var out struct {
		Result []nodeView `json:"result"`
	}
	if st := g.call("GET", "/api/v1/nodes", nil, &out); st != 200 {
		g.t.Fatalf("GET /nodes: %d", st)
	}
	return out.Result
}

func nodeNamed(vs []nodeView, name string) (nodeView, bool) {
	for _, v := range vs {
		if v.Name == name {
			return v, true
		}
	}
	return nodeView{}, false
}

func describeNodes(vs []nodeView) string {
	var b strings.Builder
	for _, v := range vs {
		age := "null"
		if v.SnapshotAge != nil {
			age = strconv.FormatFloat(*v.SnapshotAge, 'f', 1, 64)
		}
		fmt.Fprintf(&b, "\n  %s %s rev=%d lag=%d/%.1fs age=%s checks=%d/%d aps=%.1f %s", v.Name, v.State, v.Revision,
			v.Lag.Revisions, v.Lag.Seconds, age, v.Checks.Origins, v.Checks.Failing, v.AnswersPerSecond, v.Why)
	}
	return b.String()
}

// nodeRole makes a login role for one node on url's database, with every
// right on its tables, and returns the node's URL and a function that
// runs SQL as the database's owner (to take rights away).
func nodeRole(t *testing.T, url, role string) (string, func(string)) {
	t.Helper()
	ctx := context.Background()
	admin := func(sql string) {
		t.Helper()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	admin(fmt.Sprintf(`do $$ begin
		if not exists (select from pg_roles where rolname = '%[1]s') then create role %[1]s login password '%[1]s'; end if;
	end $$`, role))
	admin("grant all on all tables in schema public to " + role)
	admin("grant all on all sequences in schema public to " + role)
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	u.User = neturl.UserPassword(role, role)
	return u.String(), admin
}

// TestFleetThreeNodes is the acceptance of GET /nodes: three nodes on one
// PostgreSQL database, every field checked end to end, b announcing an
// anycast prefix to a real BIRD. Node c's change feed is then blocked
// (its role may no longer read the change log): it keeps answering its
// snapshot, shows its lag and turns stale within 10 s, and one node
// notification says so, not one per node; given the right back it serves
// again. b is drained through a's API, which it learns of by the change
// feed: its route is withdrawn within the second, well before its next
// report would tell it; it reports drained after its grace and serves
// again when undrained. c killed with SIGKILL is gone after
// --node-gone-after.
func TestFleetThreeNodes(t *testing.T) {
	t.Parallel()
	up := startOrigins(t, "127.0.40.1")[0]
	_, port, _ := net.SplitHostPort(up.addr)
	url := freshDatabase(t)
	rcv := newHookReceiver(t)
	bird := birdtest.Start(t, birdtest.Config{Local: "127.0.0.2", ASN: 65000,
		Neighbors: []birdtest.Neighbor{{Name: "b", Addr: "127.0.0.1", ASN: 65001}}})
	const route = "192.0.2.40/32"
	flags := []string{"--node-gone-after", "4s", "--drain-grace", "3s", "--notify-poll", "200ms", "--outbound-allow", "127.0.0.1"}
	a := startGlbd(t, "", append([]string{"--database-url", url, "--node", "a", "--region", "WEU"}, flags...)...)
	b := startGlbd(t, "", append([]string{"--database-url", url, "--node", "b", "--region", "WEU", "--migrate=false",
		"--bgp-asn", "65001", "--bgp-router-id", "192.0.2.2", "--bgp-peer", "127.0.0.2:" + strconv.Itoa(bird.Port) + ",65000",
		"--anycast", route, "--bgp-hold-time", "3s"}, flags...)...)
	curl, admin := nodeRole(t, url, "glb_node_c")
	c := startGlbd(t, "", append([]string{"--database-url", curl, "--node", "c", "--region", "ENAM", "--migrate=false"}, flags...)...)
	sub := rcv.subscribe(t, a, "/nodes", pools.EventNode)
	_ = sub

	p, _ := strconv.Atoi(port)
	mon := fastMonitor(t, a, p)
	zone := a.must("POST", "/api/v1/zones", map[string]any{"name": "glb.example.com", "nameservers": []string{"ns1.glb.example.com"},
		"records": []map[string]any{{"name": "ns1.glb.example.com", "type": "A", "content": "127.0.0.1"}}})
	web := a.must("POST", "/api/v1/pools", map[string]any{"name": "web", "monitor": mon, "origins": []map[string]any{
		{"name": "up", "address": "127.0.40.1"}, {"name": "down", "address": "127.0.40.2"}}})
	a.must("POST", "/api/v1/load_balancers", map[string]any{"zone": zone["id"], "name": "www.glb.example.com",
		"default_pools": []any{web["id"]}, "fallback_pool": web["id"]})
	rev := func() int64 {
		var r int64
		conn, err := pgx.Connect(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		if err := conn.QueryRow(context.Background(), "select revision from glb_revision").Scan(&r); err != nil {
			t.Fatal(err)
		}
		return r
	}

	// Every node serves the store's revision; each checks both origins,
	// one failing; a's answers are counted; b announces its prefix. The
	// version and commit are the binary's own.
	for range 60 {
		dig(t, a.dns, "www.glb.example.com", "A")
	}
	version, commit := binaryVersion(t)
	started := time.Now()
	bgpOf := map[string]pools.NodeBGP{"a": {}, "c": {},
		"b": {Sessions: []pools.BGPSession{{Peer: "127.0.0.2", ASN: 65000, State: "established"}}, Announced: []string{route}}}
	eventually(t, 30*time.Second, "three nodes serving, all fields", func() (bool, string) {
		vs := b.nodes()
		want := rev()
		if len(vs) != 3 {
			return false, describeNodes(vs)
		}
		for i, g := range []*glbd{a, b, c} {
			v := vs[i]
			region := map[string]string{"a": "WEU", "b": "WEU", "c": "ENAM"}[v.Name]
			if v.Name != string(rune('a'+i)) || v.Region != region || v.Version != version || v.Commit != commit || v.StartedAt.IsZero() ||
				v.StartedAt.After(time.Now()) || time.Since(v.LastSeen) > 3*time.Second || v.Revision != want ||
				v.Lag != (pools.NodeLag{}) || v.SnapshotAge == nil || *v.SnapshotAge > 5 ||
				v.Checks != (pools.NodeChecks{Origins: 2, Failing: 1}) || v.State != pools.NodeServing ||
				!slices.Equal(v.Listeners.UDP, []string{g.dns}) || !slices.Equal(v.Listeners.TCP, []string{g.dns}) ||
				len(v.Listeners.XDP) != 0 || !sameBGP(v.BGP, bgpOf[v.Name]) || v.Drain != nil {
				return false, describeNodes(vs) + " " + describeBGP(v)
			}
		}
		// 60 queries within the minute: at least one a second, a
		// generous floor on a loaded machine. b answers its own probe
		// every second (anycast's self-probe); c nothing.
		if vs[0].AnswersPerSecond*time.Since(started).Seconds() < 1 || vs[1].AnswersPerSecond < 0.5 || vs[1].AnswersPerSecond > 2 ||
			vs[2].AnswersPerSecond != 0 {
			return false, describeNodes(vs)
		}
		return true, ""
	})
	var one nodeView
	if st := a.call("GET", "/api/v1/nodes/c", nil, &struct{ Result *nodeView }{&one}); st != 200 || one.Name != "c" || one.Region != "ENAM" {
		t.Fatalf("GET /nodes/c: %d %+v", st, one)
	}
	if st := a.call("GET", "/api/v1/nodes/nobody", nil, nil); st != 404 {
		t.Fatalf("GET /nodes/nobody: %d, want 404", st)
	}

	// c's change feed blocked: it still reports, still answers, lags.
	admin("revoke select on config_changes from glb_node_c")
	a.must("PATCH", "/api/v1/pools/"+web["id"].(string), map[string]any{"description": "moved on"})
	written := time.Now()
	eventually(t, 10*time.Second, "c lagging and stale", func() (bool, string) {
		vs := a.nodes()
		v, _ := nodeNamed(vs, "c")
		return v.State == pools.NodeStale && v.Lag.Revisions >= 1 && v.Lag.Seconds >= pools.NodeStaleAfter.Seconds() &&
			v.Revision < rev() && *v.SnapshotAge >= pools.NodeStaleAfter.Seconds(), describeNodes(vs)
	})
	t.Logf("c stale %v after the write it could not follow", time.Since(written).Round(time.Millisecond))
	if got, status := dig(t, c.dns, "www.glb.example.com", "A"); status != "NOERROR" || !slices.Equal(got, []string{"127.0.40.1"}) {
		t.Fatalf("c answers %s %v from its snapshot, want 127.0.40.1", status, got)
	}
	eventually(t, 10*time.Second, "one stale notification", func() (bool, string) {
		hs := delivered(rcv.hooks("/nodes"))
		return len(hs) == 1 && hs[0].event.Data.Node == "c" && hs[0].event.Data.New == pools.NodeStale, describeHooks(hs)
	})
	admin("grant select on config_changes to glb_node_c")
	eventually(t, 10*time.Second, "c serving again", func() (bool, string) {
		vs := a.nodes()
		v, _ := nodeNamed(vs, "c")
		return v.State == pools.NodeServing && v.Lag == (pools.NodeLag{}), describeNodes(vs)
	})

	// b drained through a's API, just after one of b's reports: b learns
	// of it from the change feed, and its route is withdrawn within the
	// second; waiting for its next report would take nearly all of it.
	bird.WaitRoute(t, route, true, 5*time.Second)
	var drained nodeView
	afterReport(t, a, "b")
	asked := time.Now()
	if st := a.call("POST", "/api/v1/nodes/b/drain", map[string]any{"reason": "upgrade"}, &struct{ Result *nodeView }{&drained}); st != 200 ||
		drained.Drain == nil || drained.Drain.Reason != "upgrade" {
		t.Fatalf("drain b: %d %+v", st, drained)
	}
	bird.WaitRoute(t, route, false, time.Second)
	withdrawn := time.Since(asked)
	t.Logf("b's route withdrawn %v after a's API was asked to drain it", withdrawn)
	if withdrawn > pushBound {
		t.Errorf("b withdrew %v after the drain through a's API, past %v: it waited for its next report", withdrawn, pushBound)
	}
	if st := a.call("POST", "/api/v1/nodes/b/drain", map[string]any{}, nil); st != 400 {
		t.Fatalf("drain without a reason: %d, want 400", st)
	}
	eventually(t, 5*time.Second, "b draining", func() (bool, string) {
		v, _ := nodeNamed(a.nodes(), "b")
		return v.State == pools.NodeDraining, v.State
	})
	took := eventually(t, 10*time.Second, "b drained", func() (bool, string) {
		v, _ := nodeNamed(a.nodes(), "b")
		return v.State == pools.NodeDrained, v.State
	})
	// b reports drained at the first report after its grace: without
	// the grace, within a second.
	if since := time.Since(asked); since < 3*time.Second {
		t.Fatalf("b drained %v after the drain, within its 3 s grace", since)
	}
	_ = took
	if got, status := dig(t, b.dns, "www.glb.example.com", "A"); status != "NOERROR" || len(got) != 1 {
		t.Fatalf("drained b answers %s %v; a drained node still answers", status, got)
	}
	var audit struct {
		Result []pools.AuditEntry `json:"result"`
	}
	a.call("GET", "/api/v1/audit?kind=nodes", nil, &audit)
	if len(audit.Result) != 1 || audit.Result[0].Action != pools.ActionDrain || audit.Result[0].ObjectID != "b" {
		t.Fatalf("audit of the drain: %+v", audit.Result)
	}
	if v, _ := nodeNamed(a.nodes(), "b"); !sameBGP(v.BGP, pools.NodeBGP{Sessions: bgpOf["b"].Sessions}) {
		t.Fatalf("drained b: %s, want its session established and nothing announced", describeBGP(v))
	}
	afterReport(t, a, "b")
	asked = time.Now()
	if st := a.call("DELETE", "/api/v1/nodes/b/drain", nil, nil); st != 200 {
		t.Fatalf("undrain b: %d", st)
	}
	bird.WaitRoute(t, route, true, time.Second)
	t.Logf("b's route announced again %v after a's API was asked to undrain it", time.Since(asked))
	if back := time.Since(asked); back > pushBound {
		t.Errorf("b announced again %v after the undrain through a's API, past %v", back, pushBound)
	}
	eventually(t, 5*time.Second, "b serving again", func() (bool, string) {
		v, _ := nodeNamed(a.nodes(), "b")
		return v.State == pools.NodeServing && v.Drain == nil && sameBGP(v.BGP, bgpOf["b"]), v.State + " " + describeBGP(v)
	})
	hs := delivered(rcv.hooks("/nodes"))

	// c killed: gone after --node-gone-after (4 s), not before.
	_ = c.cmd.Process.Kill()
	<-c.done
	killed := time.Now()
	took = eventually(t, 15*time.Second, "c gone", func() (bool, string) {
		vs := a.nodes()
		v, _ := nodeNamed(vs, "c")
		return v.State == pools.NodeGone, describeNodes(vs)
	})
	if since := time.Since(killed); since < 3*time.Second {
		t.Fatalf("c gone %v after the kill, before --node-gone-after", since)
	}
	eventually(t, 10*time.Second, "notifications: c stale, b drained, b serving, c serving, c gone", func() (bool, string) {
		hs = delivered(rcv.hooks("/nodes"))
		var got []string
		for _, h := range hs {
			got = append(got, h.event.Data.Node+" "+h.event.Data.New)
		}
		want := []string{"c stale", "c serving", "b drained", "b serving", "c gone"}
		return slices.Equal(got, want), describeHooks(hs)
	})
}

// binaryVersion is the version glbd's own version command prints and the
// commit the binary was built from, as its build information says (Go's
// reader, not glb's): a node must report the same.
func binaryVersion(t *testing.T) (version, commit string) {
	t.Helper()
	out, err := exec.Command(glbdBin, "version").Output()
	f := strings.Fields(string(out))
	if err != nil || len(f) < 2 {
		t.Fatalf("glbd version: %v: %s", err, out)
	}
	bi, err := buildinfo.ReadFile(glbdBin)
	if err != nil {
		t.Fatal(err)
	}
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if commit != "" && dirty {
		commit += "+dirty"
	}
	return f[1], commit
}

// sameBGP compares BGP fields, nil and empty lists alike.
func sameBGP(a, b pools.NodeBGP) bool {
	return slices.Equal(a.Sessions, b.Sessions) && slices.Equal(a.Announced, b.Announced)
}

// pushBound is how soon a node acts on a drain asked through another
// node's API just after one of its reports: it hears of it from the
// change feed in milliseconds, where its next report, a second later,
// would take nearly reportEvery.
const pushBound = reportEvery / 2

// afterReport returns just after node name's next report reached the
// store, as g's API shows it.
func afterReport(t *testing.T, g *glbd, name string) {
	t.Helper()
	var v nodeView
	if st := g.call("GET", "/api/v1/nodes/"+name, nil, &struct{ Result *nodeView }{&v}); st != 200 {
		t.Fatalf("GET /nodes/%s: %d", name, st)
	}
	last := v.LastSeen
	deadline := time.Now().Add(3 * reportEvery)
	for v.LastSeen.Equal(last) {
		if time.Now().After(deadline) {
			t.Fatalf("no report of %s within %v", name, 3*reportEvery)
		}
		time.Sleep(5 * time.Millisecond)
		g.call("GET", "/api/v1/nodes/"+name, nil, &struct{ Result *nodeView }{&v})
	}
}
