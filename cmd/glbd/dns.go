package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/glb-dns/glb/analytics"
	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/dnsserver"
	"github.com/glb-dns/glb/dnsserver/tap"
	"github.com/glb-dns/glb/dnsserver/xdp"
	"github.com/glb-dns/glb/geodata"
	"github.com/glb-dns/glb/internal/version"
	"github.com/glb-dns/glb/rum"
	"github.com/glb-dns/glb/transfer"
)

// dnsService is the DNS servers as the node drives them: one per listen
// address, all answering from the same snapshot.
type dnsService struct {
	srvs []*dnsserver.Server
	xdp  []*xdp.Path
	tap  *tap.Tap // nil without --dnstap
	// counts are the answers of every server, nil with --analytics-cells 0.
	counts *analytics.Counts
	// sample is the recent queries of every server, nil with --sample-size 0.
	sample *analytics.Sample
	geo    *geodata.Resolver
	log    *slog.Logger
	// xfr serves zone transfers and sends NOTIFYs (transfer).
	xfr *transfer.Service
	// last is the DNS snapshot last published; the next is built from it
	// (dnsserver.Update), only the node loop's goroutine touches it.
	last *dnsserver.Snapshot
	// tokens are the RUM beacon names asked for, which every server
	// records (rum.go).
	tokens *rum.Tokens
}

// dnsStore is what the DNS server's writes need of the store: UPDATEs and
// the serial a transfer advances.
type dnsStore interface {
	dnsserver.UpdateStore
	transfer.Store
}

// updates takes the RFC 2136 UPDATEs (the store; nil: NOTIMP).
func startDNS(ctx context.Context, cfg *Config, geo *geodata.Resolver, log *slog.Logger, reg prometheus.Registerer, updates dnsStore) (*dnsService, error) {
	d := &dnsService{geo: geo, log: log, tokens: rum.NewTokens(4096)}
	if updates != nil {
		d.xfr = transfer.New(transfer.Config{Keys: updates, Store: updates, Logger: log})
	}
	if cfg.DNSTap != "" {
		t, err := tap.New(tap.Config{Address: cfg.DNSTap, Sample: cfg.DNSTapSample, Identity: cfg.Node,
			Version: "glb " + version.String(), Logger: log, Registerer: reg})
		if err != nil {
			return nil, err
		}
		d.tap = t
	}
	if cfg.AnalyticsCells > 0 {
		d.counts = analytics.NewCounts(cfg.AnalyticsCells)
	}
	if cfg.SampleSize > 0 {
		d.sample = analytics.NewSample(cfg.SampleSize, cfg.SampleEvery)
	}
	addrs := commaList(cfg.DNSListen)
	for _, addr := range addrs {
		r := reg
		if len(addrs) > 1 {
			// Each listener counts its own queries; the label set is the
			// configured addresses, so it stays bounded.
			r = prometheus.WrapRegistererWith(prometheus.Labels{"listener": addr}, reg)
		}
		srv, err := dnsserver.New(dnsserver.Config{Addr: addr, UDPSockets: cfg.UDPSockets, Registerer: r, Logger: log,
			NSID: cfg.NSID, VersionString: cfg.VersionString, RRL: cfg.RRL, Updates: updates, Transfers: transferer(d.xfr), Tap: d.tap, UDPPath: cfg.UDPPath, Counts: d.counts, Sample: d.sample, RUMTokens: d.tokens})
		if err == nil {
			err = srv.Start(ctx)
		}
		if err != nil {
			d.shutdown()
			return nil, err
		}
		d.srvs = append(d.srvs, srv)
	}
	if err := d.attachXDP(cfg, reg); err != nil {
		d.shutdown()
		return nil, err
	}
	return d, nil
}

// attachXDP starts the AF_XDP path on each --xdp-interface. Where it
// cannot, glbd says why and goes on serving on its sockets, which answer
// the same, unless --xdp-required.
func (d *dnsService) attachXDP(cfg *Config, reg prometheus.Registerer) error {
	var targets []xdp.Target
	for _, srv := range d.srvs {
		targets = append(targets, xdp.Target{Addr: srv.Addr(), NewResponder: func() xdp.Responder { return srv.NewResponder() }})
	}
	for _, ifc := range commaList(cfg.XDPInterface) {
		p, err := xdp.Attach(xdp.Config{Interface: ifc, Targets: targets, Registerer: reg, Logger: d.log})
		if err != nil {
			if cfg.XDPRequired {
				return fmt.Errorf("--xdp-required: %w", err)
			}
			d.log.Error("XDP path not attached; answering on kernel sockets only", "interface", ifc, "err", err)
			continue
		}
		d.xdp = append(d.xdp, p)
	}
	return nil
}

// publish compiles the DNS side of a snapshot and swaps it in. It returns
// false, keeping the last good one, when the zones do not compile.
func (d *dnsService) publish(c *current) bool {
	snap, err := dnsserver.Update(d.last, c.snap, geodata.Locator{Resolver: d.geo, Networks: c.nets})
	if err != nil {
		d.log.Error("DNS snapshot compile failed; keeping the last good one", "revision", c.snap.Revision(), "err", err)
		return false
	}
	for _, srv := range d.srvs {
		srv.Publish(snap)
	}
	d.last = snap
	if d.xfr != nil {
		d.xfr.Offer(c.snap)
	}
	return true
}

// transferState is the transfer service as the API reads it: nil when
// there is none.
func (d *dnsService) transferState() api.TransferState {
	if d.xfr == nil {
		return nil
	}
	return d.xfr
}

// transferer is x as the DNS server takes it: nil refuses transfers.
func transferer(x *transfer.Service) dnsserver.Transferer {
	if x == nil {
		return nil
	}
	return x
}

// addr lists the bound addresses, comma-separated like --dns-listen.
func (d *dnsService) addr() string {
	var out []string
	for _, srv := range d.srvs {
		out = append(out, srv.Addr().String())
	}
	return strings.Join(out, ",")
}

func (d *dnsService) shutdown() {
	// The program goes first, so that the kernel's sockets answer
	// whatever arrives until they close too.
	for _, p := range d.xdp {
		if err := p.Close(); err != nil {
			d.log.Error("XDP detach", "err", err)
		}
	}
	d.xdp = nil
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range d.srvs {
		_ = srv.Shutdown(ctx)
	}
	if d.xfr != nil {
		d.xfr.Close()
	}
	if err := d.tap.Close(ctx); err != nil {
		d.log.Warn("dnstap", "err", err)
	}
}
