package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/glb-dns/glb/pools"
)

// Notifications live in notify_* (migration 009).

// outboxLock serialises the transactions that insert events, so that
// they commit in seq order: a deliverer that has seen seq n never finds
// an n-1 committed after it.
const outboxLock int64 = 0x676c62_6e6f74 // "glbnot"

func scanSubscription(r pgx.Row) (pools.Subscription, error) {
	var s pools.Subscription
	var doc []byte
	var secret string
	if err := r.Scan(&doc, &secret); err != nil {
		return s, err
	}
	if err := json.Unmarshal(doc, &s); err != nil {
		return s, fmt.Errorf("decode subscription: %w", err)
	}
	s.Secret = secret
	return s, nil
}

// CreateSubscription stores a subscription and audits it (without the
// secret), in one transaction.
func (s *Store) CreateSubscription(ctx context.Context, sub pools.Subscription) (pools.Subscription, error) {
	now := s.now()
	if err := sub.Prepare(now); err != nil {
		return pools.Subscription{}, err
	}
	doc, err := json.Marshal(sub)
	if err != nil {
		return pools.Subscription{}, err
	}
	err = s.write(ctx, func(t *txn) error {
		tag, err := t.tx.Exec(ctx, `insert into notify_subscriptions (id, secret, created_on, doc) values ($1, $2, $3, $4)
			on conflict (id) do nothing`, sub.ID, sub.Secret, sub.CreatedOn, doc)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return &pools.ValidationError{Errors: []pools.FieldError{{Path: "id", Message: fmt.Sprintf("a subscription %q already exists", sub.ID)}}}
		}
		return t.auditChange(0, pools.ActionCreate, pools.KindNotification, sub.ID, nil, sub, now)
	})
	if err != nil {
		return pools.Subscription{}, err
	}
	return sub, nil
}

// Subscriptions lists every subscription, without secrets.
func (s *Store) Subscriptions(ctx context.Context) ([]pools.Subscription, error) {
	out := []pools.Subscription{}
	err := s.read(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = subscriptions(ctx, tx)
		return err
	})
	for i := range out {
		out[i].Secret = ""
	}
	return out, err
}

func subscriptions(ctx context.Context, tx pgx.Tx) ([]pools.Subscription, error) {
	return collect(ctx, tx, func(r pgx.CollectableRow) (pools.Subscription, error) { return scanSubscription(r) },
		"select doc, secret from notify_subscriptions order by created_on, id")
}

// Subscription returns one subscription with its secret.
func (s *Store) Subscription(ctx context.Context, id string) (pools.Subscription, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	sub, err := scanSubscription(s.pool.QueryRow(ctx, "select doc, secret from notify_subscriptions where id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return pools.Subscription{}, fmt.Errorf("notification %q: %w", id, pools.ErrNotFound)
	}
	return sub, mapError(err)
}

// ReplaceSubscription overwrites a subscription, keeping its secret when
// sub has none, and audits it.
func (s *Store) ReplaceSubscription(ctx context.Context, sub pools.Subscription) (pools.Subscription, error) {
	now := s.now()
	err := s.write(ctx, func(t *txn) error {
		old, err := scanSubscription(t.tx.QueryRow(ctx, "select doc, secret from notify_subscriptions where id = $1 for update", sub.ID))
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("notification %q: %w", sub.ID, pools.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if err := sub.Replacing(&old, now); err != nil {
			return err
		}
		doc, err := json.Marshal(sub)
		if err != nil {
			return err
		}
		if _, err := t.tx.Exec(ctx, "update notify_subscriptions set secret = $2, doc = $3 where id = $1", sub.ID, sub.Secret, doc); err != nil {
			return err
		}
		return t.auditChange(0, pools.ActionUpdate, pools.KindNotification, sub.ID, old, sub, now)
	})
	if err != nil {
		return pools.Subscription{}, err
	}
	return sub, nil
}

// DeleteSubscription removes a subscription and its deliveries.
func (s *Store) DeleteSubscription(ctx context.Context, id string) error {
	return s.write(ctx, func(t *txn) error {
		old, err := scanSubscription(t.tx.QueryRow(ctx, "delete from notify_subscriptions where id = $1 returning doc, secret", id))
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("notification %q: %w", id, pools.ErrNotFound)
		}
		if err != nil {
			return err
		}
		return t.auditChange(0, pools.ActionDelete, pools.KindNotification, id, old, nil, s.now())
	})
}

// addEvent inserts e unless its id exists, and its deliveries to the
// subscriptions that want it (only to sub when not empty). The caller's
// transaction holds the outbox lock.
func (t *txn) addEvent(e *pools.Event, only string) (bool, error) {
	if _, err := t.tx.Exec(t.ctx, "select pg_advisory_xact_lock($1)", outboxLock); err != nil {
		return false, err
	}
	body, err := json.Marshal(e)
	if err != nil {
		return false, err
	}
	var seq int64
	err = t.tx.QueryRow(t.ctx, `insert into notify_events (id, type, at, body) values ($1, $2, $3, $4)
		on conflict (id) do nothing returning seq`, e.ID, e.Type, e.Time, body).Scan(&seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	add := func(sub string) error {
		_, err := t.tx.Exec(t.ctx, `insert into notify_deliveries (subscription, seq, next_at) values ($1, $2, $3)`, sub, seq, e.Time)
		return err
	}
	if only != "" {
		return true, add(only)
	}
	subs, err := subscriptions(t.ctx, t.tx)
	if err != nil {
		return false, err
	}
	return true, pools.Deliver(subs, e, add)
}

// writeEvent records the event of an audited write, if it has one.
func (t *txn) writeEvent(e *pools.AuditEntry) error {
	ev, err := pools.WriteEvent(t, e)
	if err != nil || ev == nil {
		return err
	}
	_, err = t.addEvent(ev, "")
	return err
}

// RecordStates records the events of the changes that differ from the
// recorded states, in the order given. It takes the outbox lock first:
// the nodes reporting the same transition queue there, and the ones that
// follow the first find the state already recorded.
func (s *Store) RecordStates(ctx context.Context, changes []pools.StateChange) ([]pools.Event, error) {
	if len(changes) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, len(changes))
	for _, c := range changes {
		keys = append(keys, c.Key)
	}
	var out []pools.Event
	err := s.write(ctx, func(t *txn) error {
		if _, err := t.tx.Exec(ctx, "select pg_advisory_xact_lock($1)", outboxLock); err != nil {
			return err
		}
		rows, err := t.tx.Query(ctx, "select key, state, at from notify_state where key = any($1)", keys)
		if err != nil {
			return err
		}
		states := map[string]string{}
		since := map[string]time.Time{}
		for rows.Next() {
			var k, st string
			var at time.Time
			if err := rows.Scan(&k, &st, &at); err != nil {
				rows.Close()
				return err
			}
			states[k], since[k] = st, at
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		recorded := func(key string) (string, time.Time, bool, error) {
			state, known := states[key]
			return state, since[key], known, nil
		}
		record := func(key, state string, at time.Time) error {
			_, err := t.tx.Exec(ctx, `insert into notify_state (key, state, at) values ($1, $2, $3)
				on conflict (key) do update set state = excluded.state, at = excluded.at`, key, state, at)
			states[key], since[key] = state, at
			return err
		}
		out, err = pools.RecordStatesIn(changes, recorded, record, func(e *pools.Event) (bool, error) { return t.addEvent(e, "") })
		return err
	})
	return out, err
}

// AddEvent records e once.
func (s *Store) AddEvent(ctx context.Context, e pools.Event) (bool, error) {
	var added bool
	err := s.write(ctx, func(t *txn) error {
		var err error
		added, err = t.addEvent(&e, "")
		return err
	})
	return added, err
}

// AddTestEvent records e for one subscription.
func (s *Store) AddTestEvent(ctx context.Context, id string, e pools.Event) error {
	return s.write(ctx, func(t *txn) error {
		if err := mustExist(ctx, t.tx, "notify_subscriptions", "notification", id); err != nil {
			return err
		}
		_, err := t.addEvent(&e, id)
		return err
	})
}

// claimSQL finds each subscription's oldest pending delivery and takes
// those due and not leased; SKIP LOCKED passes over the rows another node
// is claiming at this moment.
const claimSQL = `
	with heads as (
		select distinct on (subscription) subscription, seq from notify_deliveries
		where status = 'pending' order by subscription, seq)
	select d.subscription, d.seq, d.attempts, e.body, s.doc, s.secret
	from notify_deliveries d
	join heads h on h.subscription = d.subscription and h.seq = d.seq
	join notify_events e on e.seq = d.seq
	join notify_subscriptions s on s.id = d.subscription
	where d.next_at <= $1 and (d.lease_until is null or d.lease_until <= $1)
	order by d.seq
	limit $2
	for update of d skip locked`

// ClaimDeliveries leases the due head deliveries to node.
func (s *Store) ClaimDeliveries(ctx context.Context, node string, now time.Time, lease time.Duration, max int) ([]pools.Claim, error) {
	var out []pools.Claim
	err := s.write(ctx, func(t *txn) error {
		out = out[:0]
		rows, err := t.tx.Query(ctx, claimSQL, now, max)
		if err != nil {
			return err
		}
		for rows.Next() {
			var c pools.Claim
			var body, doc []byte
			if err := rows.Scan(&c.Subscription.ID, &c.Seq, &c.Attempts, &body, &doc, &c.Subscription.Secret); err != nil {
				rows.Close()
				return err
			}
			secret := c.Subscription.Secret
			if err := json.Unmarshal(doc, &c.Subscription); err != nil {
				rows.Close()
				return fmt.Errorf("decode subscription: %w", err)
			}
			c.Subscription.Secret = secret
			if err := json.Unmarshal(body, &c.Event); err != nil {
				rows.Close()
				return fmt.Errorf("decode event %d: %w", c.Seq, err)
			}
			out = append(out, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, c := range out {
			if _, err := t.tx.Exec(ctx, `update notify_deliveries set lease_owner = $3, lease_until = $4
				where subscription = $1 and seq = $2`, c.Subscription.ID, c.Seq, node, now.Add(lease)); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// FinishDelivery records an attempt, if node still holds the lease.
func (s *Store) FinishDelivery(ctx context.Context, node string, c pools.Claim, a pools.Attempt) error {
	status, next := pools.DeliveryPending, a.Next
	var delivered *time.Time
	switch {
	case a.Error == "":
		status, next, delivered = pools.DeliveryDelivered, a.At, &a.At
	case a.Next.IsZero():
		status, next = pools.DeliveryFailed, a.At
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	_, err := s.pool.Exec(ctx, `update notify_deliveries set status = $4, attempts = attempts + 1, last_at = $5,
		last_code = $6, last_error = $7, next_at = $8, delivered_at = $9, lease_owner = null, lease_until = null
		where subscription = $1 and seq = $2 and lease_owner = $3 and status = 'pending'`,
		c.Subscription.ID, c.Seq, node, status, a.At, a.Status, a.Error, next, delivered)
	return mapError(err)
}

// Deliveries lists a subscription's deliveries, newest first.
func (s *Store) Deliveries(ctx context.Context, id string, p pools.Page) (pools.DeliveryList, error) {
	offset, limit := p.Bounds()
	res := pools.DeliveryList{Items: []pools.Delivery{}}
	err := s.read(ctx, func(tx pgx.Tx) error {
		if err := mustExist(ctx, tx, "notify_subscriptions", "notification", id); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, "select count(*) from notify_deliveries where subscription = $1", id).Scan(&res.TotalCount); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `select d.subscription, d.seq, e.body, d.status, d.attempts, d.next_at, d.last_at,
			d.last_code, d.last_error, d.delivered_at
			from notify_deliveries d join notify_events e on e.seq = d.seq
			where d.subscription = $1 order by d.seq desc limit $2 offset $3`, id, limit, offset)
		if err != nil {
			return err
		}
		res.Items, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (pools.Delivery, error) {
			var d pools.Delivery
			var body []byte
			var next time.Time
			if err := r.Scan(&d.Subscription, &d.Seq, &body, &d.Status, &d.Attempts, &next, &d.LastAttempt,
				&d.LastStatus, &d.LastError, &d.DeliveredAt); err != nil {
				return d, err
			}
			if d.Status == pools.DeliveryPending {
				next = next.UTC()
				d.NextAttempt = &next
			}
			for _, p := range []*time.Time{d.LastAttempt, d.DeliveredAt} {
				if p != nil {
					*p = p.UTC()
				}
			}
			return d, json.Unmarshal(body, &d.Event)
		})
		return err
	})
	return res, err
}

// NotifyBacklog counts the pending deliveries and dates the oldest.
func (s *Store) NotifyBacklog(ctx context.Context) (pools.Backlog, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	var b pools.Backlog
	var oldest *time.Time
	err := s.pool.QueryRow(ctx, `select count(*), min(e.at) from notify_deliveries d join notify_events e on e.seq = d.seq
		where d.status = 'pending'`).Scan(&b.Pending, &oldest)
	if oldest != nil {
		b.Oldest = oldest.UTC()
	}
	return b, mapError(err)
}

// PruneNotifications deletes old finished deliveries, then the old events
// left without any.
func (s *Store) PruneNotifications(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.write(ctx, func(t *txn) error {
		tag, err := t.tx.Exec(ctx, `delete from notify_deliveries d using notify_events e
			where e.seq = d.seq and d.status <> 'pending' and e.at < $1`, before)
		if err != nil {
			return err
		}
		n = tag.RowsAffected()
		_, err = t.tx.Exec(ctx, `delete from notify_events e where e.at < $1
			and not exists (select 1 from notify_deliveries d where d.seq = e.seq)`, before)
		return err
	})
	return n, err
}
