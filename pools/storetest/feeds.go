package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

// testFeeds: words fed in are kept one per origin and monitor, the latest
// replacing the one before, with their times and loads as written; they
// leave the configuration revision alone, notify watchers (Feeds), are
// audited when they say something new (not on a mere renewal, and by the
// caller), read back by pool, and pruned once expired.
func testFeeds(t *testing.T, c context.Context, s pools.Store) {
	wctx, stop := context.WithCancel(c)
	defer stop()
	ch := s.Watch(wctx)
	base := watchUp(t, c, s, ch)
	at := pools.StoreTime(time.Now())
	load := 0.8
	down := pools.FeedWord{Pool: "p1", Origin: "o1", Monitor: "m1", Up: false, Reason: "HighErrorRate: 5xx above 5 %",
		Source: pools.FeedSourceAlertmanager, At: at, Expires: at.Add(5 * time.Minute)}
	loaded := pools.FeedWord{Pool: "p1", Origin: "o2", Monitor: "m1", Up: true, Load: &load,
		Source: pools.FeedSourceAPI, At: at, Expires: at.Add(time.Minute)}
	other := pools.FeedWord{Pool: "p2", Origin: "o1", Monitor: "m2", Up: true, Source: pools.FeedSourceAPI, At: at, Expires: at.Add(time.Second)}
	fc := pools.WithCaller(c, pools.Caller{Actor: "prometheus", Method: "POST"})
	// down is an Alertmanager word: its alert is what makes it down.
	down.Alerts = []pools.FeedAlert{{Fingerprint: "f1", Summary: down.Reason}}
	stored, err := s.SetFeeds(fc, []pools.FeedWord{other, down, loaded})
	if err != nil {
		t.Fatalf("set feeds: %v", err)
	}
	sameObject(t, "words as stored", stored, []pools.FeedWord{other, down, loaded})
	waitChange(t, ch, "feeds written", func(ch pools.Change) bool { return ch.Feeds })
	got, err := s.Feeds(c, "")
	if err != nil {
		t.Fatal(err)
	}
	sameObject(t, "every word", got, []pools.FeedWord{down, loaded, other})
	if got, _ := s.Feeds(c, "p2"); len(got) != 1 || got[0].Origin != "o1" || got[0].Monitor != "m2" {
		t.Errorf("words of pool p2: %+v", got)
	}
	if rev, _ := s.Revision(c); rev != base {
		t.Errorf("feeding moved the configuration revision to %d", rev)
	}

	// The alert resolves: the word is replaced, and the change audited
	// with what it replaced. A renewal of it is not audited again.
	up := down
	up.Up, up.Reason, up.At, up.Expires, up.Alerts = true, "resolved", at.Add(time.Second), at.Add(6*time.Minute), nil
	resolve := up
	resolve.Resolved = []string{"f1"}
	if _, err := s.SetFeeds(fc, []pools.FeedWord{resolve}); err != nil {
		t.Fatal(err)
	}
	renewed := up
	renewed.At, renewed.Expires = at.Add(2*time.Second), at.Add(7*time.Minute)
	if _, err := s.SetFeeds(fc, []pools.FeedWord{renewed}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Feeds(c, "p1")
	sameObject(t, "pool p1 after the resolution and its renewal", got, []pools.FeedWord{renewed, loaded})

	entries, err := s.Audit(c, pools.AuditFilter{Kind: pools.KindFeed, ObjectID: "p1/o1/m1"}, pools.Page{})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries.Items) != 2 {
		t.Fatalf("audit of p1/o1/m1: %d entries, want 2 (the first word, the resolution; not the renewal): %+v", len(entries.Items), entries.Items)
	}
	e := entries.Items[0] // newest first
	if e.Action != pools.ActionUpdate || e.Actor != "prometheus" || e.Revision != 0 {
		t.Errorf("audit of the resolution: action %q actor %q revision %d", e.Action, e.Actor, e.Revision)
	}
	var before, after pools.FeedWord
	if json.Unmarshal(e.Before, &before) != nil || json.Unmarshal(e.After, &after) != nil {
		t.Fatalf("audit of the resolution: before %s after %s", e.Before, e.After)
	}
	sameObject(t, "audited before", before, down)
	sameObject(t, "audited after", after, up)
	if first := entries.Items[1]; first.Action != pools.ActionCreate || first.Before != nil && string(first.Before) != "null" {
		t.Errorf("audit of the first word: action %q before %s", first.Action, first.Before)
	}

	testFeedAlertsMerge(t, c, s, at)

	n, err := s.PruneFeeds(c, at.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("pruned %d words expired before now+2m, want 2 (o2's and p2's)", n)
	}
	got, _ = s.Feeds(c, "")
	if len(got) != 2 || got[0].Pool != "am" {
		t.Fatalf("words after the prune: %+v", got)
	}
	sameObject(t, "words after the prune", got[1], renewed)
	if _, err := s.SetFeeds(c, nil); err != nil {
		t.Errorf("no words: %v", err)
	}
}

// testFeedAlertsMerge: Alertmanager words merge their alerts with the
// stored word's: two alerts notified apart take the origin down while
// either fires; the resolution of one leaves it down; the origin is up
// once both resolved. A word past its expiry starts afresh.
func testFeedAlertsMerge(t *testing.T, c context.Context, s pools.Store, at time.Time) {
	t.Helper()
	word := func(sec int, firing []pools.FeedAlert, resolved ...string) pools.FeedWord {
		return pools.FeedWord{Pool: "am", Origin: "o", Monitor: "m", Source: pools.FeedSourceAlertmanager, Reason: "resolved",
			At: at.Add(time.Duration(sec) * time.Second), Expires: at.Add(time.Duration(sec+60) * time.Second), Alerts: firing, Resolved: resolved}
	}
	set := func(w pools.FeedWord) pools.FeedWord {
		t.Helper()
		out, err := s.SetFeeds(c, []pools.FeedWord{w})
		if err != nil || len(out) != 1 {
			t.Fatalf("set %+v: %v %v", w, out, err)
		}
		got, _ := s.Feeds(c, "am")
		sameObject(t, "the word as stored and as read", got, out)
		return out[0]
	}
	latency := pools.FeedAlert{Fingerprint: "aaa", Summary: "latency above 1 s"}
	errors := pools.FeedAlert{Fingerprint: "bbb", Summary: "5xx above 5 %"}
	w := set(word(0, []pools.FeedAlert{latency}))
	if w.Up || w.Reason != latency.Summary {
		t.Errorf("one alert firing: up %v reason %q", w.Up, w.Reason)
	}
	w = set(word(1, []pools.FeedAlert{errors}))
	if w.Up || len(w.Alerts) != 2 || w.Reason != latency.Summary+" (and 1 more alert(s))" {
		t.Errorf("a second alert, notified apart: %+v", w)
	}
	w = set(word(2, nil, "aaa"))
	if w.Up || len(w.Alerts) != 1 || w.Reason != errors.Summary {
		t.Errorf("the first resolved, the second firing: %+v", w)
	}
	w = set(word(3, nil, "bbb"))
	if !w.Up || w.Alerts != nil || w.Reason != "resolved" {
		t.Errorf("both resolved: %+v", w)
	}
	set(word(4, []pools.FeedAlert{latency}))
	w = set(word(100, []pools.FeedAlert{errors})) // latency's word expired at 64 s
	if len(w.Alerts) != 1 || w.Alerts[0] != errors {
		t.Errorf("after the expiry, the alerts %+v, want the new one alone", w.Alerts)
	}
}
