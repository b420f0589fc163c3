package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/glb-dns/glb/dnsserver"
	"github.com/glb-dns/glb/pools"
)

// Config is the whole process configuration. Each field is a flag and a
// GLB_* environment variable (the flag wins); defaults are in the comments.
// Everything dynamic (zones, pools, ...) goes through the API instead.
type Config struct {
	// DNSListen is the UDP and TCP address of the DNS server, or several
	// comma-separated (0.0.0.0:53,[::]:53). Default 127.0.0.1:5353.
	DNSListen string
	// UDPSockets is the number of SO_REUSEPORT UDP sockets per listen
	// address; 0, the default, is two per CPU the runtime uses (one on a single CPU).
	UDPSockets int
	// NSID is the identity in NSID options and CHAOS TXT id.server.;
	// default the node name, empty = none (config_edge.go).
	NSID string
	// VersionString answers CHAOS TXT version.bind.; empty = REFUSED.
	VersionString string
	// DNSTap is where a sample of the exchanges goes as dnstap messages
	// (unix:PATH or tcp:IP:PORT); empty = off. DNSTapSample keeps one in N.
	DNSTap       string
	DNSTapSample int
	// UDPPath is how UDP sockets are served (dnsserver.UDPBatched, ...).
	UDPPath string
	// RRL is response rate limiting (--rrl-*); rate 0 = off, the default.
	RRL dnsserver.RRLConfig
	// APIListen is the address of the REST API, /healthz, /readyz and
	// /metrics. Default 127.0.0.1:8080.
	APIListen string
	// DatabaseURL is a PostgreSQL URL; empty runs on the embedded store in
	// DataDir (one node).
	DatabaseURL string
	// Store: a read replica and its lag (--database-read-url,
	// --max-replica-lag, config_store.go).
	Store StoreConfig
	// DataDir holds the embedded store and the last good snapshot.
	// Default ./data.
	DataDir string
	// GeoIPDB is the path of an MMDB City or Country database, in
	// MaxMind's or ip-location-db's schema, or several paths separated by
	// commas (ip-location-db's IPv4 and IPv6 files); empty locates clients
	// by operator networks only.
	GeoIPDB string
	// GeoIPASNDB is the path of an MMDB ASN database (GeoLite2 ASN,
	// DB-IP's ASN Lite, ip-location-db's asn files), or several separated
	// by commas; it gives measured_latency its ASN level. Empty: no ASN.
	GeoIPASNDB string
	// APIToken is the bearer token of the API; required when APIListen is
	// not a loopback address.
	APIToken string
	// APITLSCert and APITLSKey are PEM files of the API's certificate
	// (chain) and key; with them the API speaks HTTPS only. They are read
	// again when they change and on SIGHUP.
	APITLSCert, APITLSKey string
	// APIInsecureHTTP allows plain HTTP on an API beyond loopback, which
	// is refused otherwise: the bearer tokens would cross the network in
	// clear text.
	APIInsecureHTTP bool
	// AuditRetention is how long audit entries are kept. Default 90 days.
	AuditRetention time.Duration
	// AnalyticsRetention is how long answer counts are kept in the store
	// (10-second buckets for the last hour, minute buckets before).
	// Default 24 hours.
	AnalyticsRetention time.Duration
	// AnalyticsCells is the cells of one 10-second bucket of answer
	// counts in memory (four buckets held, 16 bytes a cell); 0 = counting
	// off. Default 65536 (4 MiB).
	AnalyticsCells int
	// SampleSize is how many recent load balancer queries the node keeps
	// for the real-traffic preview (48 bytes each), one in SampleEvery;
	// size 0 = none. Defaults 65536 (3 MiB) and 100.
	SampleSize, SampleEvery int
	// Node names this node in health views. Default: the hostname.
	Node string
	// Region is this node's region code (WNAM, WEU, ...) in health views.
	Region string
	// CheckSource is the local address health checks are sent from.
	CheckSource string
	// CheckConcurrency bounds the health checks in flight, and so the
	// checker's goroutines and sockets. Default 0: as many as keep the
	// configured rate when every check runs to its timeout, within
	// [64, 4096] (healthcheck.Options.MaxConcurrent).
	CheckConcurrency int
	// Migrate applies the database migrations at start. Default true.
	Migrate bool
	// LogLevel is debug, info, warn or error. Default info.
	LogLevel string
	// PprofListen is a loopback address serving net/http/pprof under
	// /debug/pprof/; empty (the default) serves none.
	PprofListen string
	// XDPInterface names the interfaces (comma-separated) whose UDP
	// queries the AF_XDP path answers (dnsserver/xdp); empty, the
	// default, answers on kernel sockets only.
	XDPInterface string
	// Notify is how notification events are delivered (--notify-*).
	Notify NotifyConfig
	// Outbound is where notifications and rollout guards may send
	// requests (--outbound-*).
	Outbound OutboundConfig
	// Fleet is how the node reports to the fleet and drains (--node-gone-after, --drain-grace).
	Fleet FleetConfig
	// BGP announces the node's anycast prefixes (--bgp-*, --anycast,
	// --max-stale).
	BGP BGPConfig
	// RUM is how real user measurements are collected (--rum-*).
	RUM RUMConfig
	// XDPRequired makes glbd exit when the XDP path cannot be attached;
	// by default it says why and serves on its sockets.
	XDPRequired bool
}

// parseConfig reads flags (args) over environment variables (env).
func parseConfig(name string, args []string, env func(string) string, out io.Writer) (*Config, error) {
	host, _ := os.Hostname()
	c := &Config{}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// Parse reports its errors once, through the caller; only -h prints
	// the flags.
	fs.SetOutput(io.Discard)
	str := func(p *string, flagName, def, usage string) {
		v := def
		if e := env(envName(flagName)); e != "" {
			v = e
		}
		fs.StringVar(p, flagName, v, usage+" (env "+envName(flagName)+")")
	}
	str(&c.DNSListen, "dns-listen", "127.0.0.1:5353", "DNS listen address, UDP and TCP")
	str(&c.APIListen, "api-listen", "127.0.0.1:8080", "REST API listen address")
	str(&c.DatabaseURL, "database-url", "", "PostgreSQL URL; empty = embedded store in --data-dir")
	str(&c.DataDir, "data-dir", "./data", "directory for the embedded store and the last good snapshot")
	str(&c.GeoIPDB, "geoip-db", "", "MMDB City or Country database (MaxMind or ip-location-db schema); several comma-separated")
	str(&c.GeoIPASNDB, "geoip-asn-db", "", "MMDB ASN database (GeoLite2 ASN, DB-IP ASN Lite, ip-location-db asn) for measured_latency's ASN level; several comma-separated")
	str(&c.APIToken, "api-token", "", "API bearer token; required when the API listens beyond loopback")
	str(&c.APITLSCert, "api-tls-cert", "", "PEM certificate (chain) of the API; with --api-tls-key the API speaks HTTPS")
	str(&c.APITLSKey, "api-tls-key", "", "PEM private key of the API certificate")
	retention := "90d"
	str(&retention, "audit-retention", retention, "how long audit entries are kept (e.g. 90d, 720h)")
	analyticsRetention := "24h"
	str(&analyticsRetention, "analytics-retention", analyticsRetention, "how long answer counts are kept for the analytics API (e.g. 24h, 7d); 10-second buckets for the last hour, minute buckets before")
	str(&c.Node, "node", host, "node name in health views")
	str(&c.Region, "region", "", "this node's region code, e.g. WEU")
	str(&c.CheckSource, "check-source", "", "local address health checks are sent from")
	str(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	str(&c.PprofListen, "pprof-listen", "", "loopback address serving /debug/pprof/; empty = off")
	migrate, err := envValue(env, "migrate", true, strconv.ParseBool, "not true or false")
	if err != nil {
		return nil, err
	}
	fs.BoolVar(&c.Migrate, "migrate", migrate, "apply database migrations at start (env GLB_MIGRATE)")
	concurrency, err := envValue(env, "check-concurrency", 0, strconv.Atoi, "not a whole number")
	if err != nil {
		return nil, err
	}
	fs.IntVar(&c.CheckConcurrency, "check-concurrency", concurrency,
		"health checks in flight at most; 0 = enough for every check to run to its timeout at the configured rate, within 64-4096 (env GLB_CHECK_CONCURRENCY)")
	insecure, err := envValue(env, "api-insecure-http", false, strconv.ParseBool, "not true or false")
	if err != nil {
		return nil, err
	}
	fs.BoolVar(&c.APIInsecureHTTP, "api-insecure-http", insecure, "allow plain HTTP on an API beyond loopback (env GLB_API_INSECURE_HTTP)")
	afterEdge := edgeFlags(fs, c, env)
	afterXDP := xdpFlags(fs, c, env)
	afterNotify := notifyFlags(fs, c, env)
	afterOutbound := outboundFlags(fs, c, env)
	afterFleet := fleetFlags(fs, c, env)
	afterBGP := bgpFlags(fs, c, env)
	afterStore := storeFlags(fs, c, env)
	afterRUM := rumFlags(fs, c, env)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(out)
			fmt.Fprintf(out, "Usage of %s:\n", name)
			fs.PrintDefaults()
			return nil, err
		}
		return nil, fmt.Errorf("%w (%s -h lists the flags)", err, name)
	}
	if err := afterEdge(); err != nil {
		return nil, err
	}
	if err := afterXDP(); err != nil {
		return nil, err
	}
	if err := afterNotify(); err != nil {
		return nil, err
	}
	if err := afterOutbound(); err != nil {
		return nil, err
	}
	if err := afterFleet(); err != nil {
		return nil, err
	}
	if err := afterBGP(); err != nil {
		return nil, err
	}
	if err := afterStore(); err != nil {
		return nil, err
	}
	if err := afterRUM(); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if c.AuditRetention, err = parseRetention(retention); err != nil {
		return nil, fmt.Errorf("--audit-retention %q: %w", retention, err)
	}
	if c.AnalyticsRetention, err = parseRetention(analyticsRetention); err != nil {
		return nil, fmt.Errorf("--analytics-retention %q: %w", analyticsRetention, err)
	}
	return c, c.validate()
}

func envName(flagName string) string {
	return "GLB_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// validate reports every problem at once, like the API does.
func (c *Config) validate() error {
	var errs []error
	errs = append(errs, c.validateEdge()...)
	errs = append(errs, c.validateXDP()...)
	if host, _, err := net.SplitHostPort(c.APIListen); err != nil {
		errs = append(errs, fmt.Errorf("--api-listen %q: %w", c.APIListen, err))
	} else if c.APIToken == "" && !isLoopback(host) {
		errs = append(errs, fmt.Errorf("--api-listen %s is not a loopback address: set --api-token (GLB_API_TOKEN) so the API is not open to the network", c.APIListen))
	}
	errs = append(errs, c.validateTLS()...)
	if c.Region != "" && !pools.IsRegion(c.Region) {
		errs = append(errs, fmt.Errorf("--region %q: not one of %s", c.Region, strings.Join(pools.Regions, ", ")))
	}
	if c.CheckSource != "" {
		if _, err := netip.ParseAddr(c.CheckSource); err != nil {
			errs = append(errs, fmt.Errorf("--check-source %q: not an IP address", c.CheckSource))
		}
	}
	if c.CheckConcurrency < 0 {
		errs = append(errs, fmt.Errorf("--check-concurrency %d: want 0 (derived from the monitors) or more", c.CheckConcurrency))
	}
	if c.Node == "" {
		errs = append(errs, errors.New("--node: empty, and the hostname is unknown"))
	}
	if c.DataDir == "" {
		errs = append(errs, errors.New("--data-dir: required"))
	}
	errs = append(errs, c.validatePprof()...)
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.LogLevel)); err != nil {
		errs = append(errs, fmt.Errorf("--log-level %q: %w", c.LogLevel, err))
	}
	return errors.Join(errs...)
}

// isLoopback: "localhost", 127.0.0.0/8 and ::1. An empty host (all
// addresses) is not loopback.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
