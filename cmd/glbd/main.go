// Command glbd is glb's node: an authoritative DNS server answering
// load-balanced names, the REST API that edits them, and the health checks
// that watch every origin.
//
//	glbd [serve] [flags]   serve DNS and the API (the default)
//	glbd migrate [flags]   apply the PostgreSQL migrations and exit
//	glbd version           print the version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/glb-dns/glb/api"
	"github.com/glb-dns/glb/console"
	"github.com/glb-dns/glb/feeds"
	"github.com/glb-dns/glb/geodata"
	"github.com/glb-dns/glb/healthcheck"
	"github.com/glb-dns/glb/internal/version"
	"github.com/glb-dns/glb/migrations"
	"github.com/glb-dns/glb/notify"
	"github.com/glb-dns/glb/outbound"
	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/pools/embedded"
	"github.com/glb-dns/glb/pools/postgres"
	"github.com/glb-dns/glb/rum"
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stderr))
}

func run(args []string, env func(string) string, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && (args[0] == "serve" || args[0] == "migrate" || args[0] == "version") {
		cmd, args = args[0], args[1:]
	}
	if cmd == "version" {
		fmt.Fprintln(os.Stdout, version.Line("glbd"))
		return 0
	}
	cfg, err := parseConfig("glbd "+cmd, args, env, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "glbd:", err)
		return 2
	}
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(cfg.LogLevel))
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl})).With("node", cfg.Node)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	switch cmd {
	case "migrate":
		if cfg.DatabaseURL == "" {
			fmt.Fprintln(stderr, "glbd migrate: --database-url (GLB_DATABASE_URL) is required")
			return 2
		}
		if err := migrations.UpURL(ctx, cfg.DatabaseURL); err != nil {
			log.Error("migrate", "err", err)
			return 1
		}
		log.Info("migrations applied")
		return 0
	default:
		if err := serve(ctx, cfg, log); err != nil {
			log.Error("glbd stopped", "err", err)
			return 1
		}
		return 0
	}
}

func openStore(ctx context.Context, cfg *Config, log *slog.Logger) (pools.Store, error) {
	if cfg.DatabaseURL == "" {
		log.Info("using the embedded store", "path", filepath.Join(cfg.DataDir, "glb.db"))
		return embedded.Open(filepath.Join(cfg.DataDir, "glb.db"))
	}
	if cfg.Migrate {
		mctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := migrations.UpURL(mctx, cfg.DatabaseURL)
		cancel()
		if err != nil {
			// An unreachable database must not stop DNS: the node serves its
			// last good snapshot and catches up when the database is back.
			log.Warn("migrations not applied; will serve the last good snapshot if the database is down", "err", err)
		}
	}
	// The store's own warnings (its change listener losing the database,
	// reconnecting) belong in the node's log beside everything else.
	return postgres.Open(ctx, cfg.DatabaseURL, postgres.WithLogger(log),
		postgres.WithReadURL(cfg.Store.DatabaseReadURL), postgres.WithMaxReplicaLag(cfg.Store.MaxReplicaLag))
}

func serve(ctx context.Context, cfg *Config, log *slog.Logger) error {
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	unlock, err := lockDataDir(cfg.DataDir)
	if err != nil {
		return err
	}
	defer unlock()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	store, err := openStore(ctx, cfg, log)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer store.Close()

	geo, err := geodata.NewResolver(geodata.Config{Path: cfg.GeoIPDB, ASNPath: cfg.GeoIPASNDB, Logger: log})
	if err != nil {
		return fmt.Errorf("geoip: %w", err)
	}
	var source netip.Addr
	if cfg.CheckSource != "" {
		source = netip.MustParseAddr(cfg.CheckSource)
	}
	table := &feeds.Table{} // the words fed in: the checker's and the node's
	checker := healthcheck.New(healthcheck.Options{
		Node: cfg.Node, Region: cfg.Region, SourceAddr: source, MaxConcurrent: cfg.CheckConcurrency,
		Publisher: store, Logger: log, Registerer: reg, Feeds: table,
	})

	if cfg.PprofListen != "" {
		_, stop, err := startPprof(cfg.PprofListen, log)
		if err != nil {
			return err
		}
		defer stop()
	}
	dns, err := startDNS(ctx, cfg, geo, log, reg, store)
	if err != nil {
		return fmt.Errorf("dns: %w", err)
	}
	n := newNode(log, store, cfg.DataDir, checker, reg, dns.publish)
	n.feeds = table
	n.audit = newHealthAudit(store, cfg.Node, log)
	resolver := outbound.Resolver(cfg.Outbound.Resolver)
	notifyMetrics := notify.NewMetrics(reg)
	deliverer := notify.NewWorker(notify.Options{
		Store: store, Node: cfg.Node, Logger: log, Metrics: notifyMetrics, Timeout: notifyTimeout,
		Retry: notify.Retry{Base: cfg.Notify.RetryBase, Max: cfg.Notify.RetryMax, Window: cfg.Notify.RetryWindow},
		Lease: cfg.Notify.Lease, Poll: cfg.Notify.Poll, Outbound: cfg.Outbound.policy, Resolver: resolver,
	})
	n.notify = notify.NewObserver(store, log, notifyMetrics, deliverer.Kick)
	n.region = cfg.Region
	n.records = newClockRecords(log, reg)
	n.rollouts = newRolloutWatch(store, n.records, log, cfg.Outbound.policy.Client(webhookTimeout, resolver))
	n.start(ctx)

	var certs *certReloader
	if cfg.APITLSCert != "" {
		if certs, err = newCertReloader(cfg.APITLSCert, cfg.APITLSKey, log); err != nil {
			dns.shutdown()
			return err
		}
	}
	ln, err := net.Listen("tcp", cfg.APIListen)
	if err != nil {
		dns.shutdown()
		return fmt.Errorf("api: %w", err)
	}
	collector := rum.NewCollector(cfg.RUM.Rate, nil)
	rumHandler := &rum.Handler{Config: n.servedConfig, Collector: collector, TrustedProxies: cfg.RUM.TrustedProxies}
	if err := rumHandler.Register(reg); err != nil {
		dns.shutdown()
		return err
	}
	rums := &rumService{collector: collector, tokens: dns.tokens, store: store, node: cfg.Node, cfg: cfg.RUM, n: n, geo: geo, log: log.With("component", "rum")}
	httpSrv := &http.Server{
		Handler: withRUM(console.Mount(api.New(api.Options{
			Store: store, Token: cfg.APIToken, Explainer: explainer{n: n, geo: geo}, Snapshot: explainer{n: n, geo: geo}.snapshot,
			Ready: n.ready, Health: n.agreedHealth, OwnView: checker.PoolView, Registry: reg, Logger: log,
			Outbound: cfg.Outbound.policy, Resolver: resolver, NodeGoneAfter: cfg.Fleet.NodeGoneAfter,
			Transfers: dns.transferState(),
		})), rumHandler),
		ReadHeaderTimeout: 10 * time.Second,
	}
	scheme := "http"
	if certs != nil {
		httpSrv.TLSConfig, scheme = certs.tlsConfig(), "https"
	}
	log.Info("glbd serving", "version", version.String(), "dns", dns.addr(), "api", ln.Addr().String(), "api_scheme", scheme,
		"store", map[bool]string{true: "embedded", false: "postgresql"}[cfg.DatabaseURL == ""])

	errc := make(chan error, 4)
	go func() {
		if certs != nil {
			errc <- httpSrv.ServeTLS(ln, "", "")
			return
		}
		errc <- httpSrv.Serve(ln)
	}()
	pruneStore(ctx, store, cfg.AuditRetention, log)
	var flushed chan struct{} // closed once the last answer counts are written
	if dns.counts != nil || dns.sample != nil {
		f, err := newAnswerFlusher(dns.counts, dns.sample, store, cfg.Node, cfg.AnalyticsRetention, log, reg)
		if err != nil {
			dns.shutdown()
			return err
		}
		flushed = make(chan struct{})
		go func() { f.run(ctx); close(flushed) }()
	}
	go n.audit.run(ctx)
	go n.records.run(ctx)
	go n.notify.Run(ctx)
	go deliverer.Run(ctx)
	go geo.Run(ctx)
	go func() { errc <- checker.Run(ctx) }()
	go n.run(ctx)
	go rums.run(ctx)
	go dns.runCookies(ctx, store)
	fl := newFleet(cfg, log, store, n, dns, checker, reg, n.notify)
	fctx, fcancel := context.WithCancel(ctx)
	defer fcancel()
	fl.changes = store.Watch(fctx)
	var ac *anycast
	if cfg.BGP.ASN != 0 {
		// After the listeners and the first snapshot: it announces only
		// what already answers.
		if ac, err = newAnycast(fctx, cfg.BGP.speaker, cfg.BGP.MaxStale, log, n, dns.srvs[0].Addr(), reg); err != nil {
			dns.shutdown()
			return fmt.Errorf("bgp: %w", err)
		}
		fl.routes = ac
		go ac.run(fctx)
	}
	go fl.run(fctx)

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-hup:
			if err := geo.Reload(); err != nil {
				log.Error("geoip reload on SIGHUP", "err", err)
			}
			if certs != nil {
				certs.reloadLogged()
			}
			continue
		case err = <-errc:
			if errors.Is(err, http.ErrServerClosed) || errors.Is(err, context.Canceled) {
				err = nil
			}
		case <-ctx.Done():
		}
		break
	}
	log.Info("shutting down")
	fcancel()
	fl.stop() // withdraw, and answer for the drain grace with routes to withdraw
	if ac != nil {
		ac.stop() // the sessions close (Cease) with nothing left announced
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = httpSrv.Shutdown(sctx)
	dns.shutdown()
	if flushed != nil {
		<-flushed
	}
	n.lastGood.wait(5 * time.Second)
	return err
}
