package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

// testNodes: a node's report is kept whole, the store tells it the drain
// asked of it, a drain of a node never seen is not found, drains and
// undrains are audited with who asked, a node behind the store's
// revision keeps the time it first fell behind until it catches up, and
// watchers hear of each drain and undrain (Change.Drain).
func testNodes(t *testing.T, c context.Context, s pools.Store) {
	if _, err := s.Create(c, Zone("nodes.example.com")); err != nil { // a revision past 0
		t.Fatal(err)
	}
	rev, err := s.Revision(c)
	if err != nil {
		t.Fatal(err)
	}
	if l, err := s.Nodes(c); err != nil || len(l.Items) != 0 || l.Revision != rev {
		t.Fatalf("no node yet: %+v, %v; want none at revision %d", l, err, rev)
	}
	st := pools.NodeStatus{Name: "n1", Region: "eu", Version: "v1", Commit: "abc", StartedAt: pools.StoreTime(time.Now()),
		Revision: rev, Store: true, Checks: pools.NodeChecks{Origins: 3, Failing: 1}, AnswersPerSecond: 2.5,
		Listeners: pools.NodeListeners{UDP: []string{"127.0.0.1:53"}, TCP: []string{"127.0.0.1:53"}},
		BGP:       pools.NodeBGP{Sessions: []pools.BGPSession{{Peer: "198.18.0.1", ASN: 65000, State: "established"}}, Announced: []string{"198.18.9.9/32"}}}
	if d, err := s.ReportNode(c, st); err != nil || d != nil {
		t.Fatalf("first report: drain %v, %v", d, err)
	}
	if _, err := s.ReportNode(c, pools.NodeStatus{}); err == nil {
		t.Fatal("a report without a name was taken")
	}
	l, err := s.Nodes(c)
	if err != nil || len(l.Items) != 1 {
		t.Fatalf("after a report: %+v, %v", l, err)
	}
	got := l.Items[0]
	if got.Status.Name != "n1" || got.Status.Checks.Failing != 1 || got.Status.BGP.Sessions[0].ASN != 65000 ||
		got.Status.Listeners.UDP[0] != "127.0.0.1:53" || got.LastSeen.IsZero() || got.BehindSince() != nil || l.Revision != rev {
		t.Fatalf("kept %+v at revision %d", got, l.Revision)
	}

	if _, err := s.DrainNode(c, "nobody", &pools.NodeDrain{Reason: "x"}); !errors.Is(err, pools.ErrNotFound) {
		t.Fatalf("drain of a node never seen: %v, want not found", err)
	}
	ops := pools.WithCaller(c, pools.Caller{Actor: "ops", Method: "POST"})
	until := pools.StoreTime(time.Now().Add(time.Hour))
	if _, err := s.DrainNode(ops, "n1", &pools.NodeDrain{Reason: "upgrade", Until: &until, By: "ops"}); err != nil {
		t.Fatal(err)
	}
	d, err := s.ReportNode(c, st)
	if err != nil || d == nil || d.Reason != "upgrade" || d.Until == nil || !d.Until.Equal(until) {
		t.Fatalf("report after a drain: %+v, %v", d, err)
	}
	if _, err := s.DrainNode(pools.WithCaller(c, pools.Caller{Actor: "ops", Method: "DELETE"}), "n1", nil); err != nil {
		t.Fatal(err)
	}
	if d, err := s.ReportNode(c, st); err != nil || d != nil {
		t.Fatalf("report after the undrain: %+v, %v", d, err)
	}
	a, err := s.Audit(c, pools.AuditFilter{Kind: pools.KindNode, ObjectID: "n1"}, pools.Page{})
	if err != nil || len(a.Items) != 2 || a.Items[0].Action != pools.ActionUndrain || a.Items[1].Action != pools.ActionDrain ||
		a.Items[1].Actor != "ops" || a.Items[1].Revision != 0 {
		t.Fatalf("audit of the drain: %+v, %v", a.Items, err)
	}

	// A write the node has not applied: behind since its next report,
	// kept while it stays behind, cleared once it catches up. Its change
	// also says the watch is up (PostgreSQL's listener connected).
	wctx, stop := context.WithCancel(c)
	defer stop()
	ch := s.Watch(wctx)
	mustCreate(t, s, Monitor())
	written, err := s.Revision(c)
	if err != nil {
		t.Fatal(err)
	}
	waitChange(t, ch, "a write", func(c pools.Change) bool { return c.Revision >= written })
	if _, err := s.ReportNode(c, st); err != nil {
		t.Fatal(err)
	}
	l, _ = s.Nodes(c)
	since := l.Items[0].BehindSince()
	if since == nil || l.Revision <= st.Revision {
		t.Fatalf("behind the store: %+v at %d", l.Items[0], l.Revision)
	}
	if _, err := s.ReportNode(c, st); err != nil {
		t.Fatal(err)
	}
	l, _ = s.Nodes(c)
	if b := l.Items[0].BehindSince(); b == nil || !b.Equal(*since) {
		t.Fatalf("still behind: since %v, was %v", b, since)
	}
	v := l.Items[0].View(l.Revision, since.Add(pools.NodeStaleAfter), time.Minute)
	if v.State != pools.NodeStale || v.Lag.Revisions != l.Revision-st.Revision || v.Lag.Seconds < pools.NodeStaleAfter.Seconds() {
		t.Fatalf("view NodeStaleAfter behind: %+v", v)
	}
	st.Revision = l.Revision
	if _, err := s.ReportNode(c, st); err != nil {
		t.Fatal(err)
	}
	l, _ = s.Nodes(c)
	if b := l.Items[0].BehindSince(); b != nil {
		t.Fatalf("caught up, still behind since %v", b)
	}

	// A drain and an undrain each reach the watchers.
	if _, err := s.DrainNode(ops, "n1", &pools.NodeDrain{Reason: "upgrade"}); err != nil {
		t.Fatal(err)
	}
	waitChange(t, ch, "drain", func(c pools.Change) bool { return c.Drain })
	if _, err := s.DrainNode(ops, "n1", nil); err != nil {
		t.Fatal(err)
	}
	waitChange(t, ch, "undrain", func(c pools.Change) bool { return c.Drain })
}
