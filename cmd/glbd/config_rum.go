package main

import (
	"flag"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// RUMConfig is how the node collects and aggregates real user
// measurements (measured_latency steering). The window is the node's,
// not a load balancer's: the table merges every node's reports and is
// shared by every load balancer whose pools it measures, so one window
// keeps it one table. Every node should set the same.
type RUMConfig struct {
	// Window is the span of reports the table aggregates. Default 15m.
	Window time.Duration
	// Every is how often the node writes its reports to the store and
	// rebuilds the table from every node's. Default 10s.
	Every time.Duration
	// Rate is the reports per minute one client network (/24 or /48) may
	// send to this node; past it they are refused (429). Default 60.
	Rate float64
	// TrustedProxies may name the client in X-Forwarded-For (the reverse
	// proxies in front of the API); comma-separated CIDRs, default none.
	TrustedProxies []netip.Prefix
}

func rumFlags(fs *flag.FlagSet, c *Config, env func(string) string) (after func() error) {
	var perr []error
	dur := func(p *time.Duration, name string, def time.Duration, usage string) {
		v, err := envValue(env, name, def, time.ParseDuration, "not a duration such as 15m")
		if err != nil {
			perr = append(perr, err)
		}
		fs.DurationVar(p, name, v, usage+" (env "+envName(name)+")")
	}
	r := &c.RUM
	dur(&r.Window, "rum-window", 15*time.Minute, "span of real user measurements the measured_latency table aggregates")
	dur(&r.Every, "rum-every", 10*time.Second, "how often reports are written to the store and the measured_latency table rebuilt")
	rate, err := envValue(env, "rum-rate", 60.0, func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }, "not a number")
	if err != nil {
		perr = append(perr, err)
	}
	fs.Float64Var(&r.Rate, "rum-rate", rate, "RUM reports per minute one client network may send (env GLB_RUM_RATE)")
	proxies := env(envName("rum-trusted-proxies"))
	fs.StringVar(&proxies, "rum-trusted-proxies", proxies, "CIDRs of reverse proxies whose X-Forwarded-For names a RUM report's client (env GLB_RUM_TRUSTED_PROXIES)")
	return func() error {
		if len(perr) > 0 {
			return perr[0]
		}
		if r.Window < time.Minute {
			return fmt.Errorf("--rum-window %v: at least 1m", r.Window)
		}
		if r.Every <= 0 || r.Every > r.Window {
			return fmt.Errorf("--rum-every %v: positive and at most --rum-window", r.Every)
		}
		if !(r.Rate > 0) {
			return fmt.Errorf("--rum-rate %v: must be positive", r.Rate)
		}
		for _, s := range strings.Split(proxies, ",") {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			p, err := netip.ParsePrefix(s)
			if err != nil {
				return fmt.Errorf("--rum-trusted-proxies %q: %w", s, err)
			}
			r.TrustedProxies = append(r.TrustedProxies, p.Masked())
		}
		return nil
	}
}
