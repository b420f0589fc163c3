package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/glb-dns/glb/pools"
)

// pruneStore starts pruning what store keeps only for a while: audit
// entries older than retention; finished deliveries (and their events)
// with the audit log's retention, while pending ones stay, retried until
// given up; and the shifts that stopped being in force more than
// pools.ShiftRetention ago, so that the shifts every node loads and
// checks stay the recent ones; and the words fed in that expired more
// than feedRetention ago.
func pruneStore(ctx context.Context, store pools.Store, retention time.Duration, log *slog.Logger) {
	go pruneOld(ctx, log.With("component", "audit"), retention, store.PruneAudit, "audit log", "entries")
	go pruneOld(ctx, log.With("component", "notify"), retention, store.PruneNotifications, "delivered notifications", "deliveries")
	go pruneOld(ctx, log.With("component", "shifts"), pools.ShiftRetention, store.PruneShifts, "ended shifts", "shifts")
	go pruneOld(ctx, log.With("component", "feeds"), feedRetention, store.PruneFeeds, "expired feed words", "words")
}

// pruneEvery is how often old audit entries, deliveries and shifts are
// deleted.
const pruneEvery = time.Hour

// pruneOld deletes with prune what is older than retention, now and
// every pruneEvery until ctx ends, and logs what it deleted (what, in
// units) or why it could not. Every node prunes; deleting what another
// node already deleted costs nothing.
func pruneOld[N int | int64](ctx context.Context, log *slog.Logger, retention time.Duration, prune func(context.Context, time.Time) (N, error), what, units string) {
	t := time.NewTicker(pruneEvery)
	defer t.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Minute)
		n, err := prune(pctx, time.Now().Add(-retention))
		cancel()
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("pruning "+what, "err", err)
		case n > 0:
			log.Info(what+" pruned", units, n, "retention", retention)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
