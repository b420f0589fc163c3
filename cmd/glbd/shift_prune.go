package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/glb-dns/glb/pools"
)

// pruneShifts deletes the shifts that stopped being in force more than
// pools.ShiftRetention ago, now and every pruneEvery until ctx ends, so
// that the shifts every node loads and checks stay the recent ones. Every
// node prunes; the first to find something deletes it in one revision,
// the others find nothing.
func pruneShifts(ctx context.Context, store pools.ShiftStore, log *slog.Logger) {
	log = log.With("component", "shifts")
	t := time.NewTicker(pruneEvery)
	defer t.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Minute)
		n, err := store.PruneShifts(pctx, time.Now().Add(-pools.ShiftRetention))
		cancel()
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("pruning ended shifts", "err", err)
		case n > 0:
			log.Info("ended shifts pruned", "shifts", n, "retention", pools.ShiftRetention)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
