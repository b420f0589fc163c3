package main

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/glb-dns/glb/internal/kick"
	"github.com/glb-dns/glb/pools"
)

// clockRecords writes what the clock did and the store must keep: a
// scheduled shift's start, a shift's expiry, a rollout's step and its
// completion. DNS moves at those moments on every node's clock with no
// write; these writes follow, off the node loop. A record is retried
// until the store takes it, from every node that sees it due, so that
// whichever node reaches the store first writes it; the store keeps each
// once (a unique index, a bucket of keys, a write conditional on the
// rollout's revision), so the others' writes change nothing.
type clockRecords struct {
	log  *slog.Logger
	kick kick.Signal
	// retry is how often what the store refused is tried again.
	retry   time.Duration
	pending prometheus.Gauge

	mu sync.Mutex
	// queue holds the records not stored yet, by key; done the keys
	// stored (or found moot: another node moved the rollout on), with
	// their object's id, so that a record is written once per node.
	queue map[string]clockRecord
	done  map[string]string
}

// clockRecord is one write of clockRecords.
type clockRecord struct {
	key string
	// object is the shift's or rollout's id: the record is forgotten with
	// it.
	object string
	// at is when it happened: records are written in that order, so that
	// a shift's start is notified before its expiry.
	at    time.Time
	what  string
	write func(context.Context) error
}

func newClockRecords(log *slog.Logger, reg prometheus.Registerer) *clockRecords {
	r := &clockRecords{
		log: log.With("component", "records"), kick: kick.New(), retry: 2 * time.Second,
		pending: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "glb", Name: "clock_records_pending",
			Help: "Records of what the clock did (shift starts and expiries, rollout steps and completions) not yet stored."}),
		queue: map[string]clockRecord{}, done: map[string]string{},
	}
	reg.MustRegister(r.pending)
	return r
}

// add queues the records this node has not stored or queued yet and
// wakes the writer. It does no I/O: the node loop calls it.
func (r *clockRecords) add(recs ...clockRecord) {
	if r == nil || len(recs) == 0 {
		return
	}
	added := false
	r.mu.Lock()
	for _, rec := range recs {
		if _, ok := r.done[rec.key]; ok {
			continue
		}
		if _, ok := r.queue[rec.key]; ok {
			continue
		}
		r.queue[rec.key] = rec
		added = true
	}
	r.pending.Set(float64(len(r.queue)))
	r.mu.Unlock()
	if added {
		r.kick.Send()
	}
}

// forget drops the records of the objects live no longer holds (a shift
// pruned, a rollout gone): the store has forgotten them too.
func (r *clockRecords) forget(live map[string]bool) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, obj := range r.done {
		if !live[obj] {
			delete(r.done, key)
		}
	}
	for key, rec := range r.queue {
		if !live[rec.object] {
			delete(r.queue, key)
		}
	}
	r.pending.Set(float64(len(r.queue)))
}

// run writes the queue until ctx ends, again every retry while the store
// refuses.
func (r *clockRecords) run(ctx context.Context) {
	if r == nil {
		return
	}
	r.kick.Retrying(ctx, r.retry, r.flush)
}

// flush writes the queued records in the order they happened. One the
// store cannot take because it is away ends the round (the rest would
// each wait for it as long); one it refuses otherwise stays queued for
// the next round without holding up the others.
func (r *clockRecords) flush(ctx context.Context) {
	r.mu.Lock()
	batch := make([]clockRecord, 0, len(r.queue))
	for _, rec := range r.queue {
		batch = append(batch, rec)
	}
	r.mu.Unlock()
	slices.SortFunc(batch, func(a, b clockRecord) int { return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.key, b.key)) })
	for _, rec := range batch {
		wctx, cancel := context.WithTimeout(ctx, storeProbe)
		err := rec.write(wctx)
		cancel()
		switch {
		case errors.Is(err, pools.ErrUnavailable):
			r.log.Warn("recording "+rec.what+"; will retry", "key", rec.key, "pending", len(batch), "err", err)
			return
		case err != nil && !pools.IsDomainError(err):
			r.log.Warn("recording "+rec.what+"; will retry", "key", rec.key, "err", err)
			continue
		case err != nil:
			// Another node wrote it first, or the object moved on: nothing
			// is left to write.
			r.log.Debug(rec.what+" not written", "key", rec.key, "err", err)
		}
		r.mu.Lock()
		if _, ok := r.queue[rec.key]; ok {
			delete(r.queue, rec.key)
			r.done[rec.key] = rec.object
		}
		r.pending.Set(float64(len(r.queue)))
		r.mu.Unlock()
	}
}

// shiftRecords are the records cfg's shifts call for at now: the start of
// each scheduled shift that has started (an immediate shift's create is
// its start) and the expiry of each that reached it.
func shiftRecords(cfg *pools.Config, store pools.ShiftStore, log *slog.Logger, now time.Time) []clockRecord {
	var out []clockRecord
	for i := range cfg.Shifts {
		sh := cfg.Shifts[i]
		if sh.Scheduled() && sh.Started(now) {
			out = append(out, clockRecord{key: "shift/" + sh.ID + "/start", object: sh.ID, at: sh.StartsAt, what: "a shift's start",
				write: func(ctx context.Context) error {
					if err := store.RecordShiftStart(ctx, &sh); err != nil {
						return err
					}
					log.Info("shift started", "shift", sh.ID, "target", sh.Target.String(), "starts_at", sh.StartsAt)
					return nil
				}})
		}
		if sh.State(now) == pools.ShiftExpired {
			out = append(out, clockRecord{key: "shift/" + sh.ID + "/expire", object: sh.ID, at: sh.ExpiresAt, what: "a shift's expiry",
				write: func(ctx context.Context) error {
					if err := store.RecordShiftExpiry(ctx, &sh); err != nil {
						return err
					}
					log.Info("shift expired", "shift", sh.ID, "target", sh.Target.String(), "expires_at", sh.ExpiresAt)
					return nil
				}})
		}
	}
	return out
}

// liveObjects are the ids of cfg's shifts and rollouts: the objects
// records are kept for.
func liveObjects(cfg *pools.Config) map[string]bool {
	live := make(map[string]bool, len(cfg.Shifts)+len(cfg.Rollouts))
	for i := range cfg.Shifts {
		live[cfg.Shifts[i].ID] = true
	}
	for i := range cfg.Rollouts {
		live[cfg.Rollouts[i].ID] = true
	}
	return live
}
