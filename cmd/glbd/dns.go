package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/glb-dns/glb/dnsserver"
	"github.com/glb-dns/glb/geodata"
)

// dnsService is the DNS server as the node drives it.
type dnsService struct {
	srv *dnsserver.Server
	geo *geodata.Resolver
	log *slog.Logger
	// last is the DNS snapshot last published; the next is built from it
	// (dnsserver.Update), only the node loop's goroutine touches it.
	last *dnsserver.Snapshot
}

func startDNS(ctx context.Context, addr string, geo *geodata.Resolver, log *slog.Logger, reg prometheus.Registerer) (*dnsService, error) {
	srv, err := dnsserver.New(dnsserver.Config{Addr: addr, Registerer: reg, Logger: log})
	if err != nil {
		return nil, err
	}
	if err := srv.Start(ctx); err != nil {
		return nil, err
	}
	return &dnsService{srv: srv, geo: geo, log: log}, nil
}

// publish compiles the DNS side of a snapshot and swaps it in. It returns
// false, keeping the last good one, when the zones do not compile.
func (d *dnsService) publish(c *current) bool {
	snap, err := dnsserver.Update(d.last, c.snap, dnsserver.GeoLocator{Resolver: d.geo, Networks: c.nets})
	if err != nil {
		d.log.Error("DNS snapshot compile failed; keeping the last good one", "revision", c.snap.Revision(), "err", err)
		return false
	}
	d.srv.Publish(snap)
	d.last = snap
	return true
}

func (d *dnsService) addr() string { return d.srv.Addr().String() }

func (d *dnsService) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = d.srv.Shutdown(ctx)
}
