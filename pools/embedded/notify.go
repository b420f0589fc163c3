package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.etcd.io/bbolt"

	"github.com/glb-dns/glb/pools"
)

type storedSubscription struct {
	pools.Subscription
	Secret string `json:"secret"`
}

// storedState is the last recorded state of a key and when it was
// observed.
type storedState struct {
	State string    `json:"state"`
	At    time.Time `json:"at"`
}

type storedDelivery struct {
	Status      string     `json:"status"`
	Attempts    int        `json:"attempts"`
	NextAt      time.Time  `json:"next_at"`
	LastAt      *time.Time `json:"last_at,omitempty"`
	LastCode    int        `json:"last_code"`
	LastError   string     `json:"last_error"`
	DeliveredAt *time.Time `json:"delivered_at,omitempty"`
	LeaseOwner  string     `json:"lease_owner,omitempty"`
	LeaseUntil  time.Time  `json:"lease_until"`
}

func deliveryKey(sub string, seq int64) []byte {
	return append(append([]byte(sub), 0), seqKey(uint64(seq))...)
}

func getSubscription(tx *bbolt.Tx, id string) (pools.Subscription, error) {
	v := tx.Bucket(notifySubBucket).Get([]byte(id))
	if v == nil {
		return pools.Subscription{}, fmt.Errorf("notification %q: %w", id, pools.ErrNotFound)
	}
	var st storedSubscription
	if err := json.Unmarshal(v, &st); err != nil {
		return pools.Subscription{}, fmt.Errorf("decode notification %q: %w", id, err)
	}
	st.Subscription.Secret = st.Secret
	return st.Subscription, nil
}

// putSubscription stores s, with its secret, and records the write
// (action, from before) in the change feed and the audit log in the same
// transaction: no subscription is written unaudited.
func putSubscription(ctx context.Context, tx *bbolt.Tx, action string, before any, s pools.Subscription, now time.Time) error {
	v, err := json.Marshal(storedSubscription{Subscription: s, Secret: s.Secret})
	if err != nil {
		return err
	}
	if err := tx.Bucket(notifySubBucket).Put([]byte(s.ID), v); err != nil {
		return err
	}
	return appendChange(ctx, tx, 0, action, pools.KindNotification, s.ID, before, s, now)
}

func allSubscriptions(tx *bbolt.Tx) ([]pools.Subscription, error) {
	out := []pools.Subscription{}
	err := tx.Bucket(notifySubBucket).ForEach(func(k, _ []byte) error {
		s, err := getSubscription(tx, string(k))
		out = append(out, s)
		return err
	})
	sortSubscriptions(out)
	return out, err
}

func sortSubscriptions(s []pools.Subscription) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && (s[j].CreatedOn.Before(s[j-1].CreatedOn) || s[j].CreatedOn.Equal(s[j-1].CreatedOn) && s[j].ID < s[j-1].ID); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// CreateSubscription stores a subscription and audits it (without the
// secret).
func (s *Store) CreateSubscription(ctx context.Context, sub pools.Subscription) (pools.Subscription, error) {
	now := s.now()
	if err := sub.Prepare(now); err != nil {
		return pools.Subscription{}, err
	}
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		if tx.Bucket(notifySubBucket).Get([]byte(sub.ID)) != nil {
			return &pools.ValidationError{Errors: []pools.FieldError{{Path: "id", Message: fmt.Sprintf("a subscription %q already exists", sub.ID)}}}
		}
		return putSubscription(ctx, tx, pools.ActionCreate, nil, sub, now)
	})
	if err != nil {
		return pools.Subscription{}, err
	}
	return sub, nil
}

// Subscriptions lists every subscription, without secrets.
func (s *Store) Subscriptions(ctx context.Context) ([]pools.Subscription, error) {
	var out []pools.Subscription
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		var err error
		out, err = allSubscriptions(tx)
		return err
	})
	for i := range out {
		out[i].Secret = ""
	}
	return out, err
}

// Subscription returns one subscription with its secret.
func (s *Store) Subscription(ctx context.Context, id string) (pools.Subscription, error) {
	var out pools.Subscription
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		var err error
		out, err = getSubscription(tx, id)
		return err
	})
	return out, err
}

// ReplaceSubscription overwrites a subscription, keeping its secret when
// sub has none, and audits it.
func (s *Store) ReplaceSubscription(ctx context.Context, sub pools.Subscription) (pools.Subscription, error) {
	now := s.now()
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		old, err := getSubscription(tx, sub.ID)
		if err != nil {
			return err
		}
		if err := sub.Replacing(&old, now); err != nil {
			return err
		}
		return putSubscription(ctx, tx, pools.ActionUpdate, old, sub, now)
	})
	if err != nil {
		return pools.Subscription{}, err
	}
	return sub, nil
}

// DeleteSubscription removes a subscription and its deliveries.
func (s *Store) DeleteSubscription(ctx context.Context, id string) error {
	return s.update(ctx, func(tx *bbolt.Tx) error {
		old, err := getSubscription(tx, id)
		if err != nil {
			return err
		}
		if err := tx.Bucket(notifySubBucket).Delete([]byte(id)); err != nil {
			return err
		}
		c := tx.Bucket(notifyDeliveryBucket).Cursor()
		prefix := append([]byte(id), 0)
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Seek(prefix) {
			if err := c.Delete(); err != nil {
				return err
			}
		}
		return appendChange(ctx, tx, 0, pools.ActionDelete, pools.KindNotification, id, old, nil, s.now())
	})
}

// addEvent records e unless its id exists, and its deliveries.
func addEvent(tx *bbolt.Tx, e *pools.Event, only string) (bool, error) {
	ids := tx.Bucket(notifyEventIDBucket)
	if ids.Get([]byte(e.ID)) != nil {
		return false, nil
	}
	events := tx.Bucket(notifyEventBucket)
	seq, err := events.NextSequence()
	if err != nil {
		return false, err
	}
	body, err := json.Marshal(e)
	if err != nil {
		return false, err
	}
	if err := events.Put(seqKey(seq), body); err != nil {
		return false, err
	}
	if err := ids.Put([]byte(e.ID), seqKey(seq)); err != nil {
		return false, err
	}
	add := func(sub string) error {
		return putDelivery(tx, sub, int64(seq), &storedDelivery{Status: pools.DeliveryPending, NextAt: e.Time})
	}
	if only != "" {
		return true, add(only)
	}
	subs, err := allSubscriptions(tx)
	if err != nil {
		return false, err
	}
	return true, pools.Deliver(subs, e, add)
}

func putDelivery(tx *bbolt.Tx, sub string, seq int64, d *storedDelivery) error {
	v, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return tx.Bucket(notifyDeliveryBucket).Put(deliveryKey(sub, seq), v)
}

func writeEvent(tx *bbolt.Tx, e *pools.AuditEntry) error {
	ev, err := pools.WriteEvent(txn{tx}, e)
	if err != nil || ev == nil {
		return err
	}
	_, err = addEvent(tx, ev, "")
	return err
}

// RecordStates records the events of the changes that differ from the
// recorded states, in the order given.
func (s *Store) RecordStates(ctx context.Context, changes []pools.StateChange) ([]pools.Event, error) {
	var out []pools.Event
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		states := tx.Bucket(notifyStateBucket)
		recorded := func(key string) (string, time.Time, bool, error) {
			v := states.Get([]byte(key))
			if v == nil {
				return "", time.Time{}, false, nil
			}
			var rec storedState
			err := json.Unmarshal(v, &rec)
			return rec.State, rec.At, true, err
		}
		record := func(key, state string, at time.Time) error {
			v, err := json.Marshal(storedState{State: state, At: at})
			if err != nil {
				return err
			}
			return states.Put([]byte(key), v)
		}
		var err error
		out, err = pools.RecordStatesIn(changes, recorded, record, func(e *pools.Event) (bool, error) { return addEvent(tx, e, "") })
		return err
	})
	return out, err
}

// AddEvent records e once.
func (s *Store) AddEvent(ctx context.Context, e pools.Event) (bool, error) {
	var added bool
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		var err error
		added, err = addEvent(tx, &e, "")
		return err
	})
	return added, err
}

// AddTestEvent records e for one subscription.
func (s *Store) AddTestEvent(ctx context.Context, id string, e pools.Event) error {
	return s.update(ctx, func(tx *bbolt.Tx) error {
		if _, err := getSubscription(tx, id); err != nil {
			return err
		}
		_, err := addEvent(tx, &e, id)
		return err
	})
}

func getEvent(tx *bbolt.Tx, seq int64) (pools.Event, error) {
	var e pools.Event
	v := tx.Bucket(notifyEventBucket).Get(seqKey(uint64(seq)))
	if v == nil {
		return e, fmt.Errorf("event %d is missing", seq)
	}
	return e, json.Unmarshal(v, &e)
}

// head is a subscription's oldest pending delivery (nil when none).
func head(tx *bbolt.Tx, sub string) (int64, *storedDelivery, error) {
	prefix := append([]byte(sub), 0)
	c := tx.Bucket(notifyDeliveryBucket).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var d storedDelivery
		if err := json.Unmarshal(v, &d); err != nil {
			return 0, nil, err
		}
		if d.Status == pools.DeliveryPending {
			return int64(decodeSeq(k[len(prefix):])), &d, nil
		}
	}
	return 0, nil, nil
}

func decodeSeq(b []byte) uint64 {
	var n uint64
	for _, c := range b {
		n = n<<8 | uint64(c)
	}
	return n
}

// ClaimDeliveries leases the due head deliveries to node.
func (s *Store) ClaimDeliveries(ctx context.Context, node string, now time.Time, lease time.Duration, max int) ([]pools.Claim, error) {
	var out []pools.Claim
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		out = out[:0]
		subs, err := allSubscriptions(tx)
		if err != nil {
			return err
		}
		for _, sub := range subs {
			if len(out) >= max {
				break
			}
			seq, d, err := head(tx, sub.ID)
			if err != nil {
				return err
			}
			if d == nil || d.NextAt.After(now) || d.LeaseOwner != "" && d.LeaseUntil.After(now) {
				continue
			}
			e, err := getEvent(tx, seq)
			if err != nil {
				return err
			}
			d.LeaseOwner, d.LeaseUntil = node, now.Add(lease)
			if err := putDelivery(tx, sub.ID, seq, d); err != nil {
				return err
			}
			out = append(out, pools.Claim{Subscription: sub, Seq: seq, Event: e, Attempts: d.Attempts})
		}
		return nil
	})
	return out, err
}

// FinishDelivery records an attempt, if node still holds the lease.
func (s *Store) FinishDelivery(ctx context.Context, node string, c pools.Claim, a pools.Attempt) error {
	return s.update(ctx, func(tx *bbolt.Tx) error {
		v := tx.Bucket(notifyDeliveryBucket).Get(deliveryKey(c.Subscription.ID, c.Seq))
		if v == nil {
			return nil // the subscription was deleted meanwhile
		}
		var d storedDelivery
		if err := json.Unmarshal(v, &d); err != nil {
			return err
		}
		if d.LeaseOwner != node || d.Status != pools.DeliveryPending {
			return nil
		}
		at := pools.StoreTime(a.At)
		d.Attempts++
		d.LastAt, d.LastCode, d.LastError = &at, a.Status, a.Error
		d.LeaseOwner, d.LeaseUntil = "", time.Time{}
		switch {
		case a.Error == "":
			d.Status, d.DeliveredAt, d.NextAt = pools.DeliveryDelivered, &at, at
		case a.Next.IsZero():
			d.Status, d.NextAt = pools.DeliveryFailed, at
		default:
			d.NextAt = pools.StoreTime(a.Next)
		}
		return putDelivery(tx, c.Subscription.ID, c.Seq, &d)
	})
}

// Deliveries lists a subscription's deliveries, newest first.
func (s *Store) Deliveries(ctx context.Context, id string, p pools.Page) (pools.DeliveryList, error) {
	offset, limit := p.Bounds()
	res := pools.DeliveryList{Items: []pools.Delivery{}}
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		if _, err := getSubscription(tx, id); err != nil {
			return err
		}
		prefix := append([]byte(id), 0)
		c := tx.Bucket(notifyDeliveryBucket).Cursor()
		// Newest first: from the end of the subscription's range back.
		end := append([]byte(id), 1)
		k, v := c.Seek(end)
		if k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
		for ; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Prev() {
			if res.TotalCount >= offset && res.TotalCount < offset+limit {
				var sd storedDelivery
				if err := json.Unmarshal(v, &sd); err != nil {
					return err
				}
				seq := int64(decodeSeq(k[len(prefix):]))
				e, err := getEvent(tx, seq)
				if err != nil {
					return err
				}
				d := pools.Delivery{Subscription: id, Seq: seq, Event: e, Status: sd.Status, Attempts: sd.Attempts,
					LastAttempt: sd.LastAt, LastStatus: sd.LastCode, LastError: sd.LastError, DeliveredAt: sd.DeliveredAt}
				if sd.Status == pools.DeliveryPending {
					next := sd.NextAt
					d.NextAttempt = &next
				}
				res.Items = append(res.Items, d)
			}
			res.TotalCount++
		}
		return nil
	})
	return res, err
}

// NotifyBacklog counts the pending deliveries and dates the oldest.
func (s *Store) NotifyBacklog(ctx context.Context) (pools.Backlog, error) {
	var b pools.Backlog
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		return tx.Bucket(notifyDeliveryBucket).ForEach(func(k, v []byte) error {
			var d storedDelivery
			if err := json.Unmarshal(v, &d); err != nil {
				return err
			}
			if d.Status != pools.DeliveryPending {
				return nil
			}
			b.Pending++
			e, err := getEvent(tx, int64(decodeSeq(k[len(k)-8:])))
			if err != nil {
				return err
			}
			if b.Oldest.IsZero() || e.Time.Before(b.Oldest) {
				b.Oldest = e.Time
			}
			return nil
		})
	})
	return b, err
}

// PruneNotifications deletes old finished deliveries, then the old events
// left without any.
func (s *Store) PruneNotifications(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		n = 0
		kept := map[uint64]bool{}
		c := tx.Bucket(notifyDeliveryBucket).Cursor()
		for k, v := c.First(); k != nil; {
			var d storedDelivery
			if err := json.Unmarshal(v, &d); err != nil {
				return err
			}
			seq := decodeSeq(k[len(k)-8:])
			if d.Status != pools.DeliveryPending {
				e, err := getEvent(tx, int64(seq))
				if err != nil {
					return err
				}
				if e.Time.Before(before) {
					if err := c.Delete(); err != nil {
						return err
					}
					n++
					k, v = c.Seek(k) // Delete moves the cursor: find the next key again
					continue
				}
			}
			kept[seq] = true
			k, v = c.Next()
		}
		events, ids := tx.Bucket(notifyEventBucket), tx.Bucket(notifyEventIDBucket)
		ec := events.Cursor()
		for k, v := ec.First(); k != nil; {
			var e pools.Event
			if err := json.Unmarshal(v, &e); err != nil {
				return err
			}
			if !kept[decodeSeq(k)] && e.Time.Before(before) {
				if err := ids.Delete([]byte(e.ID)); err != nil {
					return err
				}
				if err := ec.Delete(); err != nil {
					return err
				}
				k, v = ec.Seek(k)
				continue
			}
			k, v = ec.Next()
		}
		return nil
	})
	return n, err
}
