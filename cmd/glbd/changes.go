package main

import (
	"context"
	"errors"

	"github.com/glb-dns/glb/pools"
)

// changedConfig brings base to the store's revision through the change
// feed, so that a change costs what it touches rather than a read of the
// whole configuration. It returns nil when base is the store's revision.
// done is false when the feed cannot say what changed (a gap): the caller
// then reads everything.
func (n *node) changedConfig(ctx context.Context, base *pools.Config) (cfg *pools.Config, done bool, err error) {
	cs, err := n.store.Changes(ctx, base.Revision)
	if errors.Is(err, pools.ErrChangeGap) {
		n.log.Info("change feed does not reach back to the served revision; reloading everything", "revision", base.Revision, "err", err)
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	if cs.Revision == base.Revision {
		return nil, true, nil
	}
	cfg, err = base.Apply(cs)
	if err != nil {
		return nil, false, nil
	}
	if err := n.keysOfChangedZones(ctx, cfg, cs); err != nil {
		return nil, true, err
	}
	n.ensureKeys(ctx, cfg)
	return cfg, true, nil
}
