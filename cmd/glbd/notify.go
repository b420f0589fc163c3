package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/glb-dns/glb/pools"
)

// pruneNotifications deletes finished deliveries (and their events) older
// than retention, the audit log's, now and every pruneEvery until ctx
// ends. Pending deliveries stay: they are retried until given up.
func pruneNotifications(ctx context.Context, store pools.NotifyStore, retention time.Duration, log *slog.Logger) {
	log = log.With("component", "notify")
	t := time.NewTicker(pruneEvery)
	defer t.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Minute)
		n, err := store.PruneNotifications(pctx, time.Now().Add(-retention))
		cancel()
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("pruning delivered notifications", "err", err)
		case n > 0:
			log.Info("delivered notifications pruned", "deliveries", n, "retention", retention)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
