package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/glb-dns/glb/pools/postgres"
)

// StoreConfig is how a node on PostgreSQL spreads its reads.
type StoreConfig struct {
	// DatabaseReadURL is a streaming replica of DatabaseURL's primary:
	// the node follows the configuration, the health and the changes on
	// it, and writes to the primary. Empty, the default: everything on
	// the primary.
	DatabaseReadURL string
	// MaxReplicaLag is how long the replica may take to replay what the
	// primary wrote before the node follows on the primary (until it
	// catches up). Default 5s.
	MaxReplicaLag time.Duration
}

// storeFlags are the store's flags; the function they return checks them
// after parsing.
func storeFlags(fs *flag.FlagSet, c *Config, env func(string) string) (after func() error) {
	s := &c.Store
	readURL := env(envName("database-read-url"))
	fs.StringVar(&s.DatabaseReadURL, "database-read-url", readURL,
		"PostgreSQL URL of a streaming replica the node follows the store on; writes go to --database-url (env "+envName("database-read-url")+")")
	var perr []error
	dur := durationFlag(fs, env, &perr)
	dur(&s.MaxReplicaLag, "max-replica-lag", postgres.DefaultMaxReplicaLag,
		"how long the replica may take to replay the primary's writes before the node follows on the primary")
	return func() error {
		if len(perr) > 0 {
			return perr[0]
		}
		if s.MaxReplicaLag <= 0 {
			return fmt.Errorf("--max-replica-lag %v: must be positive", s.MaxReplicaLag)
		}
		if s.DatabaseReadURL != "" && c.DatabaseURL == "" {
			return fmt.Errorf("--database-read-url needs --database-url: the replica's primary takes the writes")
		}
		return nil
	}
}
