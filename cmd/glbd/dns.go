package main

import (
	"context"
	"log/slog"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/glb-dns/glb/dnsserver"
	"github.com/glb-dns/glb/geodata"
)

// locator places clients with the GeoIP resolver (which reloads its
// database by itself) and the operator networks of one configuration.
type locator struct {
	geo  *geodata.Resolver
	nets *geodata.Networks
}

func (l locator) Locate(client netip.Prefix) geodata.Location { return l.geo.Resolve(client, l.nets) }

// dnsService is the DNS server as the node drives it.
type dnsService struct {
	srv *dnsserver.Server
	geo *geodata.Resolver
	log *slog.Logger
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
	snap, err := dnsserver.Compile(c.snap, locator{geo: d.geo, nets: c.nets})
	if err != nil {
		d.log.Error("DNS snapshot compile failed; keeping the last good one", "revision", c.snap.Revision(), "err", err)
		return false
	}
	d.srv.Publish(snap)
	return true
}

func (d *dnsService) addr() string { return d.srv.Addr().String() }

func (d *dnsService) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = d.srv.Shutdown(ctx)
}
