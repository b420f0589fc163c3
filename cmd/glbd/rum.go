package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"reflect"
	"strings"
	"time"

	"github.com/glb-dns/glb/geodata"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/rum"
	"github.com/glb-dns/glb/steering"
)

// rumService moves real user measurements through the store: every
// --rum-every it writes this node's report histograms and the beacon
// names its DNS server and its reports saw, reads every node's back over
// the window, and hands the node loop a new table (never one per report).
type rumService struct {
	collector *rum.Collector
	tokens    *rum.Tokens
	store     pools.RUMStore
	node      string
	cfg       RUMConfig
	n         *node
	geo       *geodata.Resolver
	log       *slog.Logger
	pruned    time.Time
}

func (r *rumService) run(ctx context.Context) {
	t := time.NewTicker(r.cfg.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.step(ctx, time.Now())
		}
	}
}

func (r *rumService) step(ctx context.Context, now time.Time) {
	wctx, cancel := context.WithTimeout(ctx, r.cfg.Every)
	defer cancel()
	if rows := r.collector.Rows(); len(rows) > 0 {
		if err := r.store.AddRUMSamples(wctx, r.node, rows); err != nil {
			r.log.Warn("writing RUM samples; they wait for the next write", "rows", len(rows), "err", err)
		} else {
			r.collector.Written()
		}
	}
	// Tokens are hints: one lost with an unreachable store is not retried.
	toks := append(r.collector.Tokens(), r.tokens.Drain()...)
	if err := r.store.AddRUMTokens(wctx, toks); err != nil {
		r.log.Warn("writing RUM tokens", "tokens", len(toks), "err", err)
	}
	since := now.Add(-r.cfg.Window)
	samples, err := r.store.RUMSamples(wctx, since)
	if err != nil {
		r.log.Warn("reading RUM samples; the table stays as it is", "err", err)
		return
	}
	links, err := r.store.RUMResolverLinks(wctx, since)
	if err != nil {
		r.log.Warn("reading the RUM resolver map; the table stays as it is", "err", err)
		return
	}
	var nets *geodata.Networks
	if c := r.n.cur.Load(); c != nil {
		nets = c.nets
	}
	loc := geodata.Locator{Resolver: r.geo, Networks: nets}
	m := rum.Build(samples, links, func(p netip.Prefix) geodata.Location { return loc.Locate(p) }, r.cfg.Window, now)
	select {
	case r.n.measured <- m:
	case <-ctx.Done():
	}
	if now.Sub(r.pruned) >= time.Minute {
		r.pruned = now
		if err := r.store.PruneRUM(wctx, since.Add(-time.Minute)); err != nil {
			r.log.Warn("pruning RUM samples", "err", err)
		}
	}
}

// withRUM serves the RUM collector's paths beside the API, before its
// authentication: browsers that run the beacon carry no token.
func withRUM(api http.Handler, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/rum/v1/") {
			h.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// remeasure puts a new RUM table into the served snapshot (node loop);
// a table with the same figures as the served one changes nothing.
func (n *node) remeasure(m *steering.Measurements) {
	if sameFigures(n.table, m) {
		return
	}
	n.table = m
	c := n.cur.Load()
	if c == nil {
		return
	}
	nc := &current{snap: steering.Remeasure(c.snap, m), nets: c.nets}
	if n.publish(nc) {
		n.cur.Store(nc)
	}
}

// servedConfig is the configuration being served (nil before one is).
func (n *node) servedConfig() *pools.Config {
	if c := n.cur.Load(); c != nil {
		return c.snap.Config()
	}
	return nil
}

// sameFigures reports whether two tables say the same, whenever built.
func sameFigures(a, b *steering.Measurements) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.Built, y.Built = time.Time{}, time.Time{}
	return reflect.DeepEqual(x, y)
}
