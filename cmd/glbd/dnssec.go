package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/zonekeys"
)

// ensureKeys gives every zone that turned DNSSEC on and has no active key
// its first key. Every node tries; the store serialises them, so one key
// is made, and its write bumps the revision that brings it to every node.
func (n *node) ensureKeys(ctx context.Context, cfg *pools.Config) {
	active := map[string]bool{}
	for _, k := range cfg.DNSSECKeys {
		if k.State == pools.KeyActive {
			active[k.Zone] = true
		}
	}
	for _, z := range cfg.Zones {
		if !z.DNSSEC.Enabled || active[z.ID] {
			continue
		}
		_, err := n.store.UpdateZoneKeys(ctx, z.ID, func(cur []pools.ZoneKey) ([]pools.ZoneKey, error) {
			return zonekeys.Ensure(z.Name, cur, time.Now())
		})
		if err != nil {
			n.log.Warn("making the first DNSSEC key failed; the zone stays unsigned", "zone", z.Name, "err", err)
			continue
		}
		n.log.Info("DNSSEC key made", "zone", z.Name)
	}
}

// keysOfChangedZones brings cfg's DNSSEC keys up to date for the zones a
// change set touched: a key change advances its zone's serial, so the
// zone is in the set. cfg's key list is replaced, never modified, since
// it is shared with the configuration served before.
func (n *node) keysOfChangedZones(ctx context.Context, cfg *pools.Config, cs *pools.ChangeSet) error {
	changed := map[string]bool{}
	for _, c := range cs.Changes {
		if c.Kind == pools.KindZone {
			changed[c.ID] = true
		}
	}
	if len(changed) == 0 {
		return nil
	}
	var keys []pools.ZoneKey
	for _, k := range cfg.DNSSECKeys {
		if !changed[k.Zone] {
			keys = append(keys, k)
		}
	}
	for _, z := range cfg.Zones {
		if !changed[z.ID] {
			continue
		}
		zk, err := n.store.ZoneKeys(ctx, z.ID)
		if errors.Is(err, pools.ErrNotFound) {
			continue // deleted since the change set was read
		}
		if err != nil {
			return fmt.Errorf("dnssec keys of zone %s: %w", z.Name, err)
		}
		keys = append(keys, zk...)
	}
	cfg.DNSSECKeys = keys
	return nil
}

func explainDNSSEC(cfg *pools.Config, zoneID string) api.ExplainDNSSEC {
	for _, z := range cfg.Zones {
		if z.ID != zoneID || !z.DNSSEC.Enabled {
			continue
		}
		for _, k := range cfg.DNSSECKeys {
			if k.Zone == zoneID && k.State == pools.KeyActive {
				return api.ExplainDNSSEC{Signed: true, KeyTag: k.Tag, Denial: "compact (RFC 9824)"}
			}
		}
	}
	return api.ExplainDNSSEC{}
}
