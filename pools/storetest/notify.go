package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/glb-dns/glb/pools"
)

func subscription(name, format string, events ...string) pools.Subscription {
	s := pools.Subscription{Name: name, URL: "https://hooks.example.com/" + name, Format: format, Events: events}
	if format == pools.FormatStandard {
		s.Secret = pools.NewWebhookSecret()
	}
	return s
}

// testNotifySubscriptions: a subscription is stored whole or not at all,
// its secret comes back only by id, never in a list or the audit log, a
// replace keeps it, and a delete takes the deliveries with it.
func testNotifySubscriptions(t *testing.T, c context.Context, s pools.Store) {
	c = pools.WithCaller(c, pools.Caller{Actor: pools.ActorBootstrap, Method: "POST"})
	sub := subscription("oncall", pools.FormatStandard, pools.EventPoolHealth, pools.EventFailover)
	got, err := s.CreateSubscription(c, sub)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID == "" || got.CreatedOn.IsZero() || got.Secret != sub.Secret {
		t.Fatalf("created %+v", got)
	}
	_, err = s.CreateSubscription(c, pools.Subscription{Name: "bad", URL: "ftp://x", Format: "email", Events: []string{"pool", "failover", "failover"}})
	wantPaths(t, err, "url", "format", "events[0]", "events[2]")
	_, err = s.CreateSubscription(c, pools.Subscription{Name: "pd", URL: "https://events.example.com/v2/enqueue", Format: pools.FormatPagerDuty, Events: []string{pools.EventConfig}})
	wantPaths(t, err, "events[0]", "routing_key")
	if list, err := s.Subscriptions(ctx(t)); err != nil || len(list) != 1 || list[0].Secret != "" || list[0].ID != got.ID {
		t.Fatalf("list: %+v %v", list, err)
	}
	byID, err := s.Subscription(ctx(t), got.ID)
	if err != nil || byID.Secret != sub.Secret || byID.Name != "oncall" {
		t.Fatalf("by id: %+v %v", byID, err)
	}
	repl := byID
	repl.Secret, repl.Name, repl.Events = "", "oncall-2", []string{pools.EventOriginHealth}
	if _, err := s.ReplaceSubscription(c, repl); err != nil {
		t.Fatal(err)
	}
	byID, _ = s.Subscription(ctx(t), got.ID)
	if byID.Secret != sub.Secret || byID.Name != "oncall-2" || !byID.CreatedOn.Equal(got.CreatedOn) {
		t.Fatalf("after replace: %+v", byID)
	}
	repl.Format = pools.FormatSlack
	_, err = s.ReplaceSubscription(c, repl)
	wantPaths(t, err, "format")
	if _, err := s.ReplaceSubscription(c, pools.Subscription{ID: "nope", Name: "x", URL: "https://x", Format: pools.FormatSlack, Events: []string{pools.EventConfig}}); !errors.Is(err, pools.ErrNotFound) {
		t.Errorf("replace of a missing one: %v", err)
	}
	if err := s.AddTestEvent(ctx(t), got.ID, pools.Event{ID: pools.EventID("test", "1"), Type: pools.EventTest, Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSubscription(c, got.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSubscription(c, got.ID); !errors.Is(err, pools.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	if b, err := s.NotifyBacklog(ctx(t)); err != nil || b.Pending != 0 {
		t.Errorf("deliveries of a deleted subscription still pending: %+v %v", b, err)
	}
	es := audit(t, s, pools.AuditFilter{Kind: pools.KindNotification})
	if len(es) != 3 {
		t.Fatalf("audit: %d entries, want create, update, delete", len(es))
	}
	for _, e := range es {
		if b, _ := json.Marshal(e); bytes.Contains(b, []byte(sub.Secret[6:])) {
			t.Errorf("an audit entry shows the secret: %s", b)
		}
	}
}

func health(key, state string, at time.Time) pools.StateChange {
	return pools.StateChange{Key: "pool/" + key, State: state, Assume: pools.StateUp, Event: pools.Event{
		ID: pools.EventID("pool", key, state, at.String()), Type: pools.EventPoolHealth, Time: pools.StoreTime(at),
		Data: pools.EventData{Pool: key, Pools: []string{key}, New: state},
	}}
}

// testNotifyOutbox: events are recorded once however many nodes report
// them, with the write that causes them, fanned out to the subscriptions
// that want them, and delivered per subscription in order, one node at a
// time, a lost lease passing the delivery on.
func testNotifyOutbox(t *testing.T, c context.Context, s pools.Store) {
	all, err := s.CreateSubscription(c, subscription("all", pools.FormatStandard, pools.EventPoolHealth, pools.EventConfig))
	if err != nil {
		t.Fatal(err)
	}
	other := subscription("other", pools.FormatSlack, pools.EventPoolHealth)
	other.Pools = []string{"p2"}
	other, err = s.CreateSubscription(c, other)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-time.Minute).UTC()
	// Two nodes report the same transition: one event. Up is assumed, so
	// "up" first records nothing.
	for range 2 {
		if _, err := s.RecordStates(c, []pools.StateChange{health("p1", pools.StateUp, t0)}); err != nil {
			t.Fatal(err)
		}
	}
	counts := make([]int, 4)
	atOnce(4, func(i int) {
		evs, err := s.RecordStates(c, []pools.StateChange{health("p1", pools.StateDown, t0), health("p2", pools.StateDown, t0)})
		if err != nil {
			t.Error(err)
		}
		counts[i] = len(evs)
	})
	if n := counts[0] + counts[1] + counts[2] + counts[3]; n != 2 {
		t.Fatalf("4 nodes reporting 2 transitions recorded %v events, want 2 in all", counts)
	}
	// A node behind the others reports what it observed before the
	// recorded transition: stale, no event.
	if evs, err := s.RecordStates(c, []pools.StateChange{health("p1", pools.StateUp, t0.Add(-time.Second))}); err != nil || len(evs) != 0 {
		t.Fatalf("a stale state recorded %v %v", evs, err)
	}
	// A key with nothing to assume records its first state, which
	// changes nothing: no event.
	newKey := pools.StateChange{Key: "lb/first", State: "p1", Event: pools.Event{Type: pools.EventFailover, Time: t0}}
	if evs, err := s.RecordStates(c, []pools.StateChange{newKey}); err != nil || len(evs) != 0 {
		t.Fatalf("a first state recorded %v %v", evs, err)
	}
	// A configuration write records its event in its transaction.
	z, err := s.Create(c, Zone("notify.example.com"))
	if err != nil {
		t.Fatal(err)
	}
	if added, err := s.AddEvent(c, pools.ShiftEvent(&pools.Shift{Meta: pools.Meta{ID: "s1"}, Reason: "r"}, pools.ShiftEventExpired, t0, pools.ActorClock)); err != nil || !added {
		t.Fatalf("add event: %v %v", added, err)
	}
	if added, _ := s.AddEvent(c, pools.ShiftEvent(&pools.Shift{Meta: pools.Meta{ID: "s1"}}, pools.ShiftEventExpired, t0, pools.ActorClock)); added {
		t.Error("the same expiry recorded twice")
	}
	if b, err := s.NotifyBacklog(c); err != nil || b.Pending != 4 || !b.Oldest.Equal(pools.StoreTime(t0)) {
		t.Fatalf("backlog %+v %v, want 3 for all (p1, p2, zone) and 1 for other (p2) from %v", b, err, t0)
	}

	// Only each subscription's head is claimed, by one node.
	now := time.Now()
	got, err := s.ClaimDeliveries(c, "a", now, time.Minute, 10)
	if err != nil || len(got) != 2 {
		t.Fatalf("claims %+v %v, want the head of each subscription", got, err)
	}
	heads := map[string]pools.Claim{}
	for _, cl := range got {
		heads[cl.Subscription.ID] = cl
	}
	h := heads[all.ID]
	if h.Event.Data.Pool != "p1" || h.Event.Data.New != pools.StateDown || h.Event.Data.Old != pools.StateUp || h.Subscription.Secret == "" {
		t.Fatalf("head of all: %+v", h)
	}
	if heads[other.ID].Event.Data.Pool != "p2" {
		t.Fatalf("head of other: %+v", heads[other.ID])
	}
	if more, _ := s.ClaimDeliveries(c, "b", now, time.Minute, 10); len(more) != 0 {
		t.Fatalf("node b claimed leased deliveries: %+v", more)
	}
	if err := s.FinishDelivery(c, "a", heads[other.ID], pools.Attempt{At: now, Status: 200}); err != nil {
		t.Fatal(err)
	}
	// A failed attempt keeps the head until it is due again: the next
	// event waits behind it.
	if err := s.FinishDelivery(c, "a", h, pools.Attempt{At: now, Status: 500, Error: "HTTP 500", Next: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if more, _ := s.ClaimDeliveries(c, "b", now, time.Minute, 10); len(more) != 0 {
		t.Fatalf("claimed past a head waiting for its retry: %+v", more)
	}
	later := now.Add(2 * time.Hour)
	got, _ = s.ClaimDeliveries(c, "b", later, time.Minute, 10)
	if len(got) != 1 || got[0].Seq != h.Seq || got[0].Attempts != 1 {
		t.Fatalf("retry claim %+v", got)
	}
	// Node b dies holding it; its lease runs out and c takes over. b's
	// late answer is not recorded.
	afterLease := later.Add(2 * time.Minute)
	got2, _ := s.ClaimDeliveries(c, "c", afterLease, time.Minute, 10)
	if len(got2) != 1 || got2[0].Seq != h.Seq {
		t.Fatalf("claim after the lease ran out: %+v", got2)
	}
	if err := s.FinishDelivery(c, "b", got[0], pools.Attempt{At: afterLease, Status: 200}); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishDelivery(c, "c", got2[0], pools.Attempt{At: afterLease, Status: 204}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.ClaimDeliveries(c, "c", afterLease, time.Minute, 10)
	if len(got) != 1 || got[0].Seq <= h.Seq || got[0].Event.Data.Pool != "p2" {
		t.Fatalf("after the head: %+v", got)
	}
	// Giving up moves on too.
	if err := s.FinishDelivery(c, "c", got[0], pools.Attempt{At: afterLease, Error: "connection refused"}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.ClaimDeliveries(c, "c", afterLease, time.Minute, 10)
	if len(got) != 1 || got[0].Event.Type != pools.EventConfig || got[0].Event.Data.Object != z.ObjectMeta().ID {
		t.Fatalf("third: %+v", got)
	}
	list, err := s.Deliveries(c, all.ID, pools.Page{})
	if err != nil || list.TotalCount != 3 || len(list.Items) != 3 {
		t.Fatalf("deliveries %+v %v", list, err)
	}
	first, second := list.Items[2], list.Items[1]
	if first.Status != pools.DeliveryDelivered || first.Attempts != 2 || first.LastStatus != 204 || first.DeliveredAt == nil || first.LastError != "" {
		t.Errorf("first delivery: %+v", first)
	}
	if second.Status != pools.DeliveryFailed || second.LastError != "connection refused" {
		t.Errorf("second delivery: %+v", second)
	}
	if list.Items[0].Status != pools.DeliveryPending || list.Items[0].NextAttempt == nil {
		t.Errorf("third delivery: %+v", list.Items[0])
	}
	if _, err := s.Deliveries(c, "nope", pools.Page{}); !errors.Is(err, pools.ErrNotFound) {
		t.Errorf("deliveries of a missing subscription: %v", err)
	}

	// Pruning drops the finished deliveries of old events, never a
	// pending one.
	if n, err := s.PruneNotifications(c, afterLease.Add(time.Hour)); err != nil || n != 3 {
		t.Fatalf("pruned %d deliveries, %v; want the 3 finished (2 of all, 1 of other)", n, err)
	}
	list, err = s.Deliveries(c, all.ID, pools.Page{})
	if err != nil || list.TotalCount != 1 || list.Items[0].Status != pools.DeliveryPending {
		t.Fatalf("after pruning: %+v %v", list, err)
	}
	if got, _ := s.ClaimDeliveries(c, "c", afterLease.Add(2*time.Minute), time.Minute, 10); len(got) != 1 || got[0].Event.Type != pools.EventConfig {
		t.Fatalf("the pending delivery after pruning: %+v", got)
	}

	// A rollover step records a dnssec event with the keys' write; a
	// call that changes nothing records none.
	keys, err := s.CreateSubscription(c, subscription("keys", pools.FormatSlack, pools.EventDNSSEC))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := s.UpdateZoneKeys(c, z.ObjectMeta().ID, ensureOne("k1")); err != nil {
			t.Fatal(err)
		}
	}
	kl, err := s.Deliveries(c, keys.ID, pools.Page{})
	if err != nil || len(kl.Items) != 1 || kl.Items[0].Event.Type != pools.EventDNSSEC || kl.Items[0].Event.Data.Object != z.ObjectMeta().ID ||
		kl.Items[0].Event.Data.New != "csk 4242 active" {
		t.Fatalf("dnssec deliveries %+v %v", kl.Items, err)
	}
}
