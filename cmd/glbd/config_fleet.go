package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/glb-dns/glb/pools"
)

// FleetConfig is how the node shows itself to the fleet and leaves it.
type FleetConfig struct {
	// NodeGoneAfter is how long a node may go without a report before
	// GET /nodes calls it gone. Default 60s.
	NodeGoneAfter time.Duration
	// DrainGrace is how long a draining node keeps answering after it
	// withdrew its routes, so that resolvers' retries land, before it
	// reports drained (and, on SIGTERM with BGP, before it closes its
	// listeners). Default 10s.
	DrainGrace time.Duration
}

// fleetFlags are the fleet's flags; the function they return checks them
// after parsing.
func fleetFlags(fs *flag.FlagSet, c *Config, env func(string) string) (after func() error) {
	var perr []error
	dur := durationFlag(fs, env, &perr)
	f := &c.Fleet
	dur(&f.NodeGoneAfter, "node-gone-after", pools.NodeGoneAfter, "how long a node may go without a report before GET /nodes calls it gone")
	dur(&f.DrainGrace, "drain-grace", 10*time.Second, "how long a draining node keeps answering after withdrawing its routes, before it reports drained")
	return func() error {
		if len(perr) > 0 {
			return perr[0]
		}
		if f.NodeGoneAfter < 3*reportEvery {
			return fmt.Errorf("--node-gone-after %v: must be at least three reports (%v)", f.NodeGoneAfter, 3*reportEvery)
		}
		if f.DrainGrace < 0 {
			return fmt.Errorf("--drain-grace %v: must not be negative", f.DrainGrace)
		}
		return nil
	}
}
