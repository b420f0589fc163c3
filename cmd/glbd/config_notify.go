package main

import (
	"flag"
	"fmt"
	"time"
)

// NotifyConfig is how the node delivers notification events.
type NotifyConfig struct {
	// RetryBase is the wait after a first failed delivery; it doubles
	// with each failure. Default 5s.
	RetryBase time.Duration
	// RetryMax bounds the wait between attempts. Default 10m.
	RetryMax time.Duration
	// RetryWindow is how long an event is retried before it is given up.
	// Default 24h.
	RetryWindow time.Duration
	// Lease is how long a delivery this node claimed stays its own; when
	// the node dies, another takes it over after that. Default 1m.
	Lease time.Duration
	// Poll is how often the outbox is looked at for events other nodes
	// recorded. Default 1s.
	Poll time.Duration
}

// notifyFlags are the delivery flags; the function they return checks
// them after parsing.
func notifyFlags(fs *flag.FlagSet, c *Config, env func(string) string) (after func() error) {
	var perr []error
	dur := durationFlag(fs, env, &perr)
	n := &c.Notify
	dur(&n.RetryBase, "notify-retry-base", 5*time.Second, "wait after a first failed notification delivery; doubles with each failure")
	dur(&n.RetryMax, "notify-retry-max", 10*time.Minute, "longest wait between two delivery attempts")
	dur(&n.RetryWindow, "notify-retry-window", 24*time.Hour, "how long an event is retried before it is given up")
	dur(&n.Lease, "notify-lease", time.Minute, "how long a claimed delivery stays this node's; another node takes over after it")
	dur(&n.Poll, "notify-poll", time.Second, "how often the outbox is looked at for events other nodes recorded")
	return func() error {
		if len(perr) > 0 {
			return perr[0]
		}
		for name, d := range map[string]time.Duration{"--notify-retry-base": n.RetryBase, "--notify-retry-max": n.RetryMax,
			"--notify-retry-window": n.RetryWindow, "--notify-lease": n.Lease, "--notify-poll": n.Poll} {
			if d <= 0 {
				return fmt.Errorf("%s %v: must be positive", name, d)
			}
		}
		if n.Lease <= notifyTimeout {
			return fmt.Errorf("--notify-lease %v: must outlast one delivery attempt (%v)", n.Lease, notifyTimeout)
		}
		return nil
	}
}

// notifyTimeout bounds one delivery attempt.
const notifyTimeout = 10 * time.Second
