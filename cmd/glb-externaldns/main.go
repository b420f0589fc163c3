// Command glb-externaldns is an ExternalDNS webhook provider for glb: it
// runs beside ExternalDNS in each Kubernetes cluster and keeps that
// cluster's pools, origins and records in one glb zone up to date, talking
// to glb only through its public REST API. glb does the global steering,
// health checks and failover between the clusters. docs/kubernetes.md has
// the mapping.
//
//	glb-externaldns --zone ZONE_ID --owner CLUSTER [--server URL] [--token TOKEN]
//	                [--listen 127.0.0.1:8888] [--health-listen :8080] [--monitor ID]
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
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// Config is the process configuration: flags, each defaulting to its
// environment variable.
type Config struct {
	// Server is glb's API base URL. Default http://127.0.0.1:8080 (GLB_SERVER).
	Server string
	// Token is a bearer token with the write scope (GLB_API_TOKEN).
	Token string
	// Listen is the webhook's address, loopback only: ExternalDNS runs in
	// the same pod. Default 127.0.0.1:8888, ExternalDNS's default
	// (GLB_EXTERNALDNS_LISTEN).
	Listen string
	// HealthListen serves /healthz and /readyz for the kubelet's probes. Default :8080
	// (GLB_EXTERNALDNS_HEALTH_LISTEN); empty turns it off.
	HealthListen string
	// Zone is the id of the glb zone this provider manages (GLB_ZONE).
	Zone string
	// Owner names this cluster; what the provider makes is marked
	// "external-dns:<owner>" and it changes nothing else. Required
	// (GLB_EXTERNALDNS_OWNER).
	Owner string
	// Monitor is the monitor id given to the pools it makes when an
	// endpoint names none (GLB_EXTERNALDNS_MONITOR). Default none.
	Monitor string
	// LogLevel is debug, info, warn or error (GLB_LOG_LEVEL).
	LogLevel string
}

func parseConfig(args []string, env func(string) string, stderr io.Writer) (Config, error) {
	def := func(name, fallback string) string {
		if v := env(name); v != "" {
			return v
		}
		return fallback
	}
	var c Config
	fs := flag.NewFlagSet("glb-externaldns", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.Server, "server", def("GLB_SERVER", "http://127.0.0.1:8080"), "glb API base URL (GLB_SERVER)")
	fs.StringVar(&c.Token, "token", "", "bearer token with the write scope (default GLB_API_TOKEN)")
	fs.StringVar(&c.Listen, "listen", def("GLB_EXTERNALDNS_LISTEN", "127.0.0.1:8888"), "webhook address for ExternalDNS (GLB_EXTERNALDNS_LISTEN)")
	fs.StringVar(&c.HealthListen, "health-listen", def("GLB_EXTERNALDNS_HEALTH_LISTEN", ":8080"), "address of /healthz (liveness) and /readyz (glb answers), empty for none (GLB_EXTERNALDNS_HEALTH_LISTEN)")
	fs.StringVar(&c.Zone, "zone", env("GLB_ZONE"), "id of the glb zone to manage (GLB_ZONE)")
	fs.StringVar(&c.Owner, "owner", env("GLB_EXTERNALDNS_OWNER"), "this cluster's name, marked on what it makes (GLB_EXTERNALDNS_OWNER)")
	fs.StringVar(&c.Monitor, "monitor", env("GLB_EXTERNALDNS_MONITOR"), "monitor id for the pools it makes, unless an endpoint names one (GLB_EXTERNALDNS_MONITOR)")
	fs.StringVar(&c.LogLevel, "log-level", def("GLB_LOG_LEVEL", "info"), "debug, info, warn or error (GLB_LOG_LEVEL)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if c.Token == "" {
		c.Token = env("GLB_API_TOKEN")
	}
	var bad []string
	if u, err := url.Parse(c.Server); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad = append(bad, fmt.Sprintf("--server %q: want a URL such as http://127.0.0.1:8080", c.Server))
	}
	if c.Zone == "" {
		bad = append(bad, "--zone: the id of the glb zone to manage is required")
	}
	if c.Owner == "" {
		bad = append(bad, "--owner: this cluster's name is required (each cluster its own)")
	} else if len(ownerPrefix+c.Owner) > 128 || strings.ContainsAny(c.Owner, "/\x00") {
		bad = append(bad, fmt.Sprintf("--owner %q: at most %d bytes, no /", c.Owner, 128-len(ownerPrefix)))
	}
	if _, err := parseLevel(c.LogLevel); err != nil {
		bad = append(bad, err.Error())
	}
	if len(bad) > 0 {
		return c, errors.New(strings.Join(bad, "\n"))
	}
	return c, nil
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("--log-level %q: want debug, info, warn or error", s)
	}
	return l, nil
}

func main() {
	cfg, err := parseConfig(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "glb-externaldns:", err)
		os.Exit(2)
	}
	level, _ := parseLevel(cfg.LogLevel)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, log); err != nil {
		log.Error("glb-externaldns stopped", "err", err)
		os.Exit(1)
	}
}

// run serves until ctx ends. It reads the zone first: its name is the
// domain filter, and a wrong zone id or token should stop the start, not
// the first sync.
func run(ctx context.Context, cfg Config, log *slog.Logger) error {
	cl := newClient(cfg.Server, cfg.Token)
	var zone glbZone
	for attempt := 0; ; attempt++ {
		zctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		z, err := cl.zone(zctx, cfg.Zone)
		cancel()
		if err == nil {
			zone = z
			break
		}
		if statusOf(err)/100 == 4 {
			return fmt.Errorf("zone %q: %w", cfg.Zone, err)
		}
		log.Warn("glb not reachable yet", "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(time.Duration(attempt+1)*time.Second, 10*time.Second)):
		}
	}
	p := &provider{cl: cl, zoneID: cfg.Zone, zoneName: zone.Name, owner: cfg.Owner, monitor: cfg.Monitor,
		log: log.With("component", "provider")}

	hooks, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	servers := []*http.Server{{Handler: p.webhook(), ReadHeaderTimeout: 10 * time.Second}}
	listeners := []net.Listener{hooks}
	if cfg.HealthListen != "" {
		hl, err := net.Listen("tcp", cfg.HealthListen)
		if err != nil {
			hooks.Close()
			return err
		}
		servers = append(servers, &http.Server{Handler: p.health(), ReadHeaderTimeout: 10 * time.Second})
		listeners = append(listeners, hl)
	}
	errs := make(chan error, len(servers))
	for i, s := range servers {
		go func() { errs <- s.Serve(listeners[i]) }()
	}
	attrs := []any{"webhook", hooks.Addr().String(), "zone", zone.Name, "owner", cfg.Owner}
	if len(listeners) > 1 {
		attrs = append(attrs, "health", listeners[1].Addr().String())
	}
	log.Info("glb-externaldns serving", attrs...)
	select {
	case err = <-errs:
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, s := range servers {
		_ = s.Shutdown(sctx)
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
