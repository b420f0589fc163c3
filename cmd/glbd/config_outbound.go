package main

import (
	"flag"
	"fmt"
	"net/netip"
	"strings"

	"github.com/glb-dns/glb/outbound"
)

// OutboundConfig is where the node may send the requests API users point
// it at (notification receivers, rollout guards).
type OutboundConfig struct {
	// Allow lists addresses, CIDR networks and host names that may be
	// reached although in a class refused by default (loopback,
	// link-local, private, shared, multicast, unspecified). Default none.
	Allow []string
	// Deny lists addresses, networks and host names refused besides;
	// a deny wins over an allow. Default none.
	Deny []string
	// Resolver is the DNS server (IP:port) asked for the addresses of
	// outbound URLs' host names; empty, the default, is the system's.
	Resolver string
	// policy is Allow and Deny, checked.
	policy *outbound.Policy
}

// listFlag is a repeatable flag whose every value may also be a
// comma-separated list; the environment's value stands until the first
// flag, which replaces it (the flag wins). whole keeps each value as
// given, for values with commas of their own (--bgp-peer).
type listFlag struct {
	p       *[]string
	fromEnv bool
	whole   bool
}

func (l *listFlag) String() string {
	if l.p == nil {
		return ""
	}
	return strings.Join(*l.p, ",")
}

func (l *listFlag) Set(v string) error {
	if l.fromEnv {
		*l.p, l.fromEnv = nil, false
	}
	if l.whole {
		*l.p = append(*l.p, v)
		return nil
	}
	*l.p = append(*l.p, commaList(v)...)
	return nil
}

// outboundFlags are the --outbound-* flags; the function they return
// checks them after parsing.
func outboundFlags(fs *flag.FlagSet, c *Config, env func(string) string) (after func() error) {
	o := &c.Outbound
	list := func(p *[]string, name, usage string) {
		*p = commaList(env(envName(name)))
		fs.Var(&listFlag{p: p, fromEnv: len(*p) > 0}, name, usage+" (env "+envName(name)+", comma-separated)")
	}
	list(&o.Allow, "outbound-allow", "address, CIDR network or host name that notifications, rollout guards and AXFR imports may reach although loopback, link-local, private, shared (100.64.0.0/10), multicast or unspecified; repeatable")
	list(&o.Deny, "outbound-deny", "address, CIDR network or host name that notifications, rollout guards and AXFR imports may not reach; wins over --outbound-allow; repeatable")
	fs.StringVar(&o.Resolver, "outbound-resolver", env(envName("outbound-resolver")),
		"DNS server (IP:port) asked for the addresses of notification and guard URLs; empty = the system's resolver (env "+envName("outbound-resolver")+")")
	return func() error {
		p, err := outbound.New(o.Allow, o.Deny)
		if err != nil {
			return err
		}
		o.policy = p
		if o.Resolver != "" {
			if _, err := netip.ParseAddrPort(o.Resolver); err != nil {
				return fmt.Errorf("--outbound-resolver %q: not an IP:port (127.0.0.1:53, [::1]:53)", o.Resolver)
			}
		}
		return nil
	}
}
