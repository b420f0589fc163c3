package geodata

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Config says where the GeoIP database is and how it is watched.
type Config struct {
	// Path of a MaxMind-format City or Country database (GeoIP2, GeoLite2,
	// DB-IP Lite). Empty: no GeoIP; only operator networks locate clients.
	// Replace the file by renaming a new one over it (as geoipupdate
	// does), never by rewriting it in place: the old file stays mapped
	// until lookups are done with it.
	Path string
	// PollInterval between checks of the file's identity, size and
	// modification time. Default 5s; negative disables polling (Reload
	// still works).
	PollInterval time.Duration
	// Verify checks every record of a file before using it (maxminddb's
	// Reader.Verify), on top of the checks always made. Costly: about
	// 20 s and gigabytes of short-lived garbage for GeoLite2 City. For
	// databases from sources the operator does not control.
	Verify bool
	// Logger receives load and reload events. Default slog.Default().
	Logger *slog.Logger
}

// Resolver turns client addresses into locations with the GeoIP database it
// holds, which it reloads when the file changes. Lookups never wait for a
// reload and never see a half-loaded database.
type Resolver struct {
	path     string
	verify   bool
	interval time.Duration
	log      *slog.Logger

	db atomic.Pointer[database]

	mu sync.Mutex // serialises loads
	// rejected is the file last refused, so that polling does not retry
	// (and log) it until it changes.
	rejected os.FileInfo

	loads, rejections atomic.Uint64
}

// NewResolver loads the configured database. A database that cannot be
// loaded is an error: starting without the GeoIP the operator asked for
// would steer every client as unknown.
func NewResolver(cfg Config) (*Resolver, error) {
	r := &Resolver{path: cfg.Path, verify: cfg.Verify, interval: cfg.PollInterval, log: cfg.Logger}
	if r.interval == 0 {
		r.interval = 5 * time.Second
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	r.log = r.log.With("component", "geodata")
	if r.path != "" {
		if err := r.Reload(); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Reload opens the database file again, whether or not it changed (glbd
// calls it on SIGHUP). A file that fails to open or verify is rejected and
// the database in use stays; lookups carry on throughout.
func (r *Resolver) Reload() error {
	if r.path == "" {
		return errors.New("geodata: no GeoIP database configured")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.load()
}

func (r *Resolver) load() error {
	start := time.Now()
	db, err := openDatabase(r.path, r.verify)
	if err != nil {
		r.rejections.Add(1)
		if info, serr := os.Stat(r.path); serr == nil {
			r.rejected = info
		}
		if r.db.Load() != nil {
			r.log.Warn("geoip database rejected, keeping the one in use", "path", r.path, "err", err)
		}
		return fmt.Errorf("geodata: load %w", err)
	}
	r.rejected = nil
	r.loads.Add(1)
	// The old database is not closed here: lookups may still read it. It
	// is unmapped once the last of them has let go of it.
	r.db.Store(db)
	r.log.Info("geoip database loaded", "path", r.path, "type", db.kind,
		"built", db.built.UTC().Format(time.DateOnly), "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// Run polls the database file until ctx ends and reloads it when it has
// changed: another file renamed over it, or a new size or modification
// time.
func (r *Resolver) Run(ctx context.Context) {
	if r.path == "" || r.interval < 0 {
		return
	}
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.poll()
		}
	}
}

func (r *Resolver) poll() {
	info, err := os.Stat(r.path)
	if err != nil {
		// A missing file is the gap in a non-atomic replacement, or an
		// operator's mistake; either way the database in use stays.
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if db := r.db.Load(); db != nil && sameFile(db.info, info) {
		return
	}
	if r.rejected != nil && sameFile(r.rejected, info) {
		return
	}
	_ = r.load() // logged; the old database stays
}

func sameFile(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// Loads counts the databases loaded and the files rejected since start,
// for metrics.
func (r *Resolver) Loads() (loaded, rejected uint64) {
	return r.loads.Load(), r.rejections.Load()
}

// Info describes the database in use; false when there is none.
func (r *Resolver) Info() (DatabaseInfo, bool) {
	db := r.database()
	if db == nil {
		return DatabaseInfo{}, false
	}
	return db.describe(), true
}

// database returns the current database, nil when none is loaded.
func (r *Resolver) database() *database {
	if r == nil {
		return nil
	}
	return r.db.Load()
}
