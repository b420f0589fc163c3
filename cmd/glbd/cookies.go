package main

import (
	"context"
	"time"

	"github.com/glb-dns/glb/dnsserver"
	"github.com/glb-dns/glb/pools"
)

const (
	// cookieRotation is how long a cookie secret serves before it is
	// replaced; the previous one is still accepted until the next
	// rotation, far longer than a server cookie lives (one hour).
	cookieRotation = 24 * time.Hour
	// cookieRefresh is how often a node reads the shared secret, so a
	// rotation by another node reaches it within that time.
	cookieRefresh = 30 * time.Second
)

// runCookies keeps the DNS servers on the cluster's cookie secret until
// ctx ends. Until the store answers, each server keeps a random secret of
// its own: cookies then work per node.
func (d *dnsService) runCookies(ctx context.Context, store pools.CookieSecretStore) {
	t := time.NewTicker(cookieRefresh)
	defer t.Stop()
	var last []byte
	for {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		cs, err := store.CookieSecret(rctx, cookieRotation)
		cancel()
		switch {
		case err != nil:
			d.log.Warn("cookie secret unavailable; keeping the current one", "err", err)
		case string(cs.Current) != string(last):
			var sec dnsserver.CookieSecrets
			copy(sec.Current[:], cs.Current)
			sec.HasPrevious = copy(sec.Previous[:], cs.Previous) == len(sec.Previous)
			for _, srv := range d.srvs {
				srv.SetCookieSecrets(sec)
			}
			last = cs.Current
			d.log.Info("cookie secret installed", "rotated_on", cs.RotatedOn)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
