package main

import (
	"flag"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/glb-dns/glb/analytics"
	"github.com/glb-dns/glb/dnsserver"
	"github.com/glb-dns/glb/dnsserver/tap"
)

// edgeFlags are the flags of a DNS server on the public internet: its
// identity (NSID, CHAOS) and response rate limiting. They return a
// function to call after parsing.
func edgeFlags(fs *flag.FlagSet, c *Config, env func(string) string) (after func() error) {
	var perr []error
	intVar := func(p *int, name string, def int, usage string) {
		v, err := envValue(env, name, def, strconv.Atoi, "not a whole number")
		if err != nil {
			perr = append(perr, err)
		}
		fs.IntVar(p, name, v, usage+" (env "+envName(name)+")")
	}
	strVar := func(p *string, name, usage string) {
		fs.StringVar(p, name, env(envName(name)), usage+" (env "+envName(name)+")")
	}
	intVar(&c.RRL.Rate, "rrl-rate", 0, "responses per second per client network and answer; 0 = response rate limiting off")
	intVar(&c.RRL.Slip, "rrl-slip", 2, "every Nth rate-limited response is sent truncated (TC=1) so real clients retry over TCP; 0 = never, 1 = always")
	intVar(&c.RRL.IPv4Prefix, "rrl-ipv4-prefix", 24, "IPv4 prefix length grouping clients for rate limiting")
	intVar(&c.RRL.IPv6Prefix, "rrl-ipv6-prefix", 56, "IPv6 prefix length grouping clients for rate limiting")
	fs.StringVar(&c.UDPPath, "udp-path", envOr(env, "udp-path", dnsserver.UDPBatched), "how UDP is served: batched (several datagrams per system call, replies through send-only twin sockets), reader (batched, replies through the reading socket, where twins are refused) or portable (one datagram per call) (env "+envName("udp-path")+")")
	intVar(&c.UDPSockets, "udp-sockets", 0, "SO_REUSEPORT UDP sockets per DNS listen address, each answered by its own loop; 0 = two per CPU the runtime uses (GOMAXPROCS), one on a single CPU")
	strVar(&c.NSID, "nsid", "identity sent in NSID and CHAOS TXT id.server.; default the node name; --nsid= turns it off")
	strVar(&c.VersionString, "version-string", "version told to CHAOS TXT version.bind.; empty = REFUSED")
	strVar(&c.DNSTap, "dnstap", "send a sample of queries and their replies as dnstap messages to unix:/path/to/socket or tcp:IP:PORT (lossy: a slow reader loses messages, never slows answers); empty = off")
	intVar(&c.DNSTapSample, "dnstap-sample", 1, "send one exchange in N to --dnstap")
	intVar(&c.SampleSize, "sample-size", analytics.DefaultSampleSize, "recent load balancer queries kept (client subnet cut to /24 or /56, type) for the real-traffic preview, 48 bytes each; 0 = none")
	intVar(&c.SampleEvery, "sample-every", analytics.DefaultSampleEvery, "keep one load balancer query in N in --sample-size")
	intVar(&c.AnalyticsCells, "analytics-cells", analytics.DefaultCells, "cells of one 10-second bucket of answer counts (load balancer, pool, origin, region, country, rcode) in memory: 4 buckets of 16 bytes a cell; 0 = answers not counted")
	return func() error {
		set := env(envName("nsid")) != ""
		fs.Visit(func(f *flag.Flag) { set = set || f.Name == "nsid" })
		if !set {
			c.NSID = c.Node
		}
		if len(perr) > 0 {
			return perr[0]
		}
		return nil
	}
}

// commaList splits a comma-separated flag (--dns-listen, --xdp-interface)
// into its items, blanks dropped.
func commaList(s string) []string {
	var out []string
	for _, a := range strings.Split(s, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// validateEdge reports every problem of the DNS listen addresses and the
// edge flags.
func (c *Config) validateEdge() []error {
	var errs []error
	addrs := commaList(c.DNSListen)
	if len(addrs) == 0 {
		errs = append(errs, fmt.Errorf("--dns-listen: at least one address"))
	}
	seen := map[string]bool{}
	for _, a := range addrs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			errs = append(errs, fmt.Errorf("--dns-listen %q: %w", a, err))
		} else if seen[a] {
			errs = append(errs, fmt.Errorf("--dns-listen: %s given twice", a))
		}
		seen[a] = true
	}
	if c.DNSTap != "" {
		if _, err := tap.ParseAddress(c.DNSTap); err != nil {
			errs = append(errs, fmt.Errorf("--dnstap: %w", err))
		}
	}
	if c.AnalyticsCells < 0 || c.AnalyticsCells > 1<<24 {
		errs = append(errs, fmt.Errorf("--analytics-cells %d: want 0 (off) to %d", c.AnalyticsCells, 1<<24))
	}
	if c.SampleSize < 0 || c.SampleSize > 1<<24 {
		errs = append(errs, fmt.Errorf("--sample-size %d: want 0 (none) to %d", c.SampleSize, 1<<24))
	}
	if c.SampleEvery < 1 {
		errs = append(errs, fmt.Errorf("--sample-every %d: want 1 (every query) or more", c.SampleEvery))
	}
	if c.DNSTapSample < 1 {
		errs = append(errs, fmt.Errorf("--dnstap-sample %d: want 1 (every exchange) or more", c.DNSTapSample))
	}
	switch c.UDPPath {
	case dnsserver.UDPBatched, dnsserver.UDPReader, dnsserver.UDPPortable:
	default:
		errs = append(errs, fmt.Errorf("--udp-path %q: want %s, %s or %s", c.UDPPath, dnsserver.UDPBatched, dnsserver.UDPReader, dnsserver.UDPPortable))
	}
	r := c.RRL
	if c.UDPSockets < 0 || c.UDPSockets > 1024 {
		errs = append(errs, fmt.Errorf("--udp-sockets %d: want 0 (two per CPU) to 1024", c.UDPSockets))
	}
	if r.Rate < 0 || r.Rate > dnsserver.MaxRRLRate {
		errs = append(errs, fmt.Errorf("--rrl-rate %d: want 0 (off) to %d", r.Rate, dnsserver.MaxRRLRate))
	}
	if r.Slip < 0 || r.Slip > 255 {
		errs = append(errs, fmt.Errorf("--rrl-slip %d: want 0 to 255", r.Slip))
	}
	if r.IPv4Prefix < 1 || r.IPv4Prefix > 32 {
		errs = append(errs, fmt.Errorf("--rrl-ipv4-prefix %d: want 1 to 32", r.IPv4Prefix))
	}
	if r.IPv6Prefix < 1 || r.IPv6Prefix > 128 {
		errs = append(errs, fmt.Errorf("--rrl-ipv6-prefix %d: want 1 to 128", r.IPv6Prefix))
	}
	if len(c.NSID) > 512 {
		errs = append(errs, fmt.Errorf("--nsid: %d bytes, at most 512", len(c.NSID)))
	}
	return errs
}

// envOr is the environment's value for the flag name, else def.
func envOr(env func(string) string, name, def string) string {
	if v := env(envName(name)); v != "" {
		return v
	}
	return def
}
