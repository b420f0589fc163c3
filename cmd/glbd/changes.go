package main

import (
	"context"
	"errors"

	"github.com/glb-dns/glb/pools"
)

// applyChanges brings the served configuration to the store's revision
// through the change feed, so that a change costs what it touches rather
// than a read of the whole configuration. done is false when the feed
// cannot say what changed (a gap): the caller then reads everything.
func (n *node) applyChanges(ctx context.Context) (done bool, err error) {
	cs, err := n.store.Changes(ctx, n.cfg.Revision)
	if errors.Is(err, pools.ErrChangeGap) {
		n.log.Info("change feed does not reach back to the served revision; reloading everything", "revision", n.cfg.Revision, "err", err)
		return false, nil
	}
	if err != nil {
		return true, err
	}
	if cs.Revision == n.cfg.Revision {
		return true, nil
	}
	cfg, err := n.cfg.Apply(cs)
	if err != nil {
		return false, nil
	}
	if err := n.keysOfChangedZones(ctx, cfg, cs); err != nil {
		return true, err
	}
	n.ensureKeys(ctx, cfg)
	n.apply(cfg, true)
	return true, nil
}
