package main

import (
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/glb-dns/glb/bgp"
)

// BGPConfig is how the node announces its anycast prefixes. BGP is off
// unless ASN is set.
type BGPConfig struct {
	// ASN is the node's autonomous system number; 0, the default, is no
	// BGP.
	ASN uint32
	// RouterID is the node's BGP identifier, an IPv4 address.
	RouterID string
	// Peers are the routers, ADDR[:PORT],ASN[,PASSWORD] each (the flag is
	// repeatable; the environment variable separates them by spaces).
	Peers []string
	// Anycast are the prefixes announced (an address alone is a /32 or
	// /128): IPv4 to IPv4 peers, IPv6 to IPv6 peers.
	Anycast []string
	// Communities are ASN:VALUE pairs attached to the announcements.
	Communities []string
	// MED is the multi-exit discriminator announced; empty = none.
	MED string
	// ListenPort is where the node accepts BGP sessions; 0, the default,
	// does not listen (the node connects to its peers).
	ListenPort int
	// HoldTime offered to the peers. Default 90s.
	HoldTime time.Duration
	// MaxStale withdraws the routes when the snapshot served is older than
	// this (not confirmed against the store); 0, the default, never: a
	// node cut from the store answers from its snapshot, and announces.
	MaxStale time.Duration

	speaker bgp.Config // the above, checked
}

// bgpFlags are the --bgp-* flags, --anycast and --max-stale; the function
// they return checks them after parsing.
func bgpFlags(fs *flag.FlagSet, c *Config, env func(string) string) (after func() error) {
	b := &c.BGP
	var perr []error
	asn, err := envValue(env, "bgp-asn", uint64(0), func(s string) (uint64, error) { return strconv.ParseUint(s, 10, 32) }, "not an AS number")
	if err != nil {
		perr = append(perr, err)
	}
	fs.Uint64Var(&asn, "bgp-asn", asn, "the node's AS number; 0 = no BGP (env "+envName("bgp-asn")+")")
	fs.StringVar(&b.RouterID, "bgp-router-id", env(envName("bgp-router-id")), "the node's BGP router ID, an IPv4 address (env "+envName("bgp-router-id")+")")
	b.Peers = strings.Fields(env(envName("bgp-peer")))
	fs.Var(&listFlag{p: &b.Peers, fromEnv: len(b.Peers) > 0, whole: true}, "bgp-peer",
		"a router to announce to, ADDR[:PORT],ASN[,PASSWORD]; repeatable (env "+envName("bgp-peer")+", separated by spaces)")
	list := func(p *[]string, name, usage string) {
		*p = commaList(env(envName(name)))
		fs.Var(&listFlag{p: p, fromEnv: len(*p) > 0}, name, usage+" (env "+envName(name)+", comma-separated)")
	}
	list(&b.Anycast, "anycast", "an anycast prefix announced over BGP while the node can answer (IPv4 or IPv6; an address alone is a host route); repeatable")
	list(&b.Communities, "bgp-community", "a BGP community ASN:VALUE attached to the announcements; repeatable")
	fs.StringVar(&b.MED, "bgp-med", env(envName("bgp-med")), "the MED announced; empty = none (env "+envName("bgp-med")+")")
	port, err := envValue(env, "bgp-listen-port", 0, strconv.Atoi, "not a port")
	if err != nil {
		perr = append(perr, err)
	}
	fs.IntVar(&b.ListenPort, "bgp-listen-port", port, "the port BGP sessions are accepted on; 0 = none, the node connects to its peers (env "+envName("bgp-listen-port")+")")
	dur := durationFlag(fs, env, &perr)
	dur(&b.HoldTime, "bgp-hold-time", 90*time.Second, "the BGP hold time offered to the peers")
	dur(&b.MaxStale, "max-stale", 0, "withdraw the anycast routes while the snapshot served is older than this; 0 = never (static stability)")
	return func() error {
		if len(perr) > 0 {
			return perr[0]
		}
		b.ASN = uint32(asn)
		return b.check()
	}
}

// check validates the flags and fills b.speaker.
func (b *BGPConfig) check() error {
	if b.ASN == 0 {
		if len(b.Peers) > 0 || len(b.Anycast) > 0 {
			return errors.New("--bgp-peer and --anycast need --bgp-asn")
		}
		return nil
	}
	s := &b.speaker
	s.ASN = b.ASN
	id, err := netip.ParseAddr(b.RouterID)
	if err != nil || !id.Is4() {
		return fmt.Errorf("--bgp-router-id %q: not an IPv4 address (required with --bgp-asn)", b.RouterID)
	}
	s.RouterID = id
	if len(b.Peers) == 0 {
		return errors.New("--bgp-peer: at least one with --bgp-asn")
	}
	for _, v := range b.Peers {
		p, err := parsePeer(v)
		if err != nil {
			return fmt.Errorf("--bgp-peer %q: %w", v, err)
		}
		s.Peers = append(s.Peers, p)
	}
	if len(b.Anycast) == 0 {
		return errors.New("--anycast: at least one prefix with --bgp-asn")
	}
	for _, v := range b.Anycast {
		p, err := netip.ParsePrefix(v)
		if err != nil {
			a, aerr := netip.ParseAddr(v)
			if aerr != nil {
				return fmt.Errorf("--anycast %q: not a prefix or an address", v)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		s.Prefixes = append(s.Prefixes, p.Masked())
	}
	for _, v := range b.Communities {
		hi, lo, ok := strings.Cut(v, ":")
		h, herr := strconv.ParseUint(hi, 10, 16)
		l, lerr := strconv.ParseUint(lo, 10, 16)
		if !ok || herr != nil || lerr != nil {
			return fmt.Errorf("--bgp-community %q: not ASN:VALUE with both below 65536", v)
		}
		s.Communities = append(s.Communities, uint32(h)<<16|uint32(l))
	}
	if b.MED != "" {
		m, err := strconv.ParseUint(b.MED, 10, 32)
		if err != nil {
			return fmt.Errorf("--bgp-med %q: not a whole number below 2^32", b.MED)
		}
		med := uint32(m)
		s.MED = &med
	}
	if b.ListenPort < 0 || b.ListenPort > 65535 {
		return fmt.Errorf("--bgp-listen-port %d: not a port", b.ListenPort)
	}
	s.ListenPort = uint16(b.ListenPort)
	if b.HoldTime < 3*time.Second {
		return fmt.Errorf("--bgp-hold-time %v: at least 3s (RFC 4271)", b.HoldTime)
	}
	s.HoldTime = b.HoldTime
	if b.MaxStale < 0 {
		return fmt.Errorf("--max-stale %v: must not be negative", b.MaxStale)
	}
	return nil
}

// parsePeer reads ADDR[:PORT],ASN[,PASSWORD].
func parsePeer(v string) (bgp.Peer, error) {
	parts := strings.SplitN(v, ",", 3)
	if len(parts) < 2 {
		return bgp.Peer{}, errors.New("not ADDR[:PORT],ASN[,PASSWORD]")
	}
	var p bgp.Peer
	if ap, err := netip.ParseAddrPort(parts[0]); err == nil {
		p.Addr, p.Port = ap.Addr(), ap.Port()
	} else if a, err := netip.ParseAddr(parts[0]); err == nil {
		p.Addr = a
	} else {
		return bgp.Peer{}, fmt.Errorf("%q: not an address or ADDR:PORT ([v6]:PORT)", parts[0])
	}
	asn, err := strconv.ParseUint(parts[1], 10, 32)
	if err != nil || asn == 0 {
		return bgp.Peer{}, fmt.Errorf("%q: not an AS number", parts[1])
	}
	p.ASN = uint32(asn)
	if len(parts) == 3 {
		p.Password = parts[2]
	}
	return p, nil
}
