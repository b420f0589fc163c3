package main

import (
	"errors"
	"flag"
	"strconv"
)

// xdpFlags are the flags of the AF_XDP path (dnsserver/xdp). They return
// a function to call after parsing.
func xdpFlags(fs *flag.FlagSet, c *Config, env func(string) string) (after func() error) {
	fs.StringVar(&c.XDPInterface, "xdp-interface", env(envName("xdp-interface")),
		"network interfaces (comma-separated) on which an XDP program hands UDP queries to glbd's AF_XDP path; empty = kernel sockets only (env "+envName("xdp-interface")+")")
	required, perr := envValue(env, "xdp-required", false, strconv.ParseBool, "not true or false")
	fs.BoolVar(&c.XDPRequired, "xdp-required", required,
		"exit when the XDP path cannot be attached, rather than serve on kernel sockets alone (env "+envName("xdp-required")+")")
	return func() error { return perr }
}

func (c *Config) validateXDP() []error {
	if c.XDPRequired && len(commaList(c.XDPInterface)) == 0 {
		return []error{errors.New("--xdp-required: set --xdp-interface too")}
	}
	return nil
}
