package geodata

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config says where the GeoIP database is and how it is watched.
type Config struct {
	// Path of an MMDB City or Country database, in MaxMind's schema
	// (GeoIP2, GeoLite2, DB-IP Lite) or ip-location-db's; or of several,
	// separated by commas, such as ip-location-db's IPv4 and IPv6 files:
	// an IPv4 address is looked up in the first IPv4-only file, else the
	// first file; an IPv6 address in the first file that is not
	// IPv4-only. Empty: no GeoIP; only operator networks locate clients.
	// Replace a file by renaming a new one over it (as geoipupdate does),
	// never by rewriting it in place: the old file stays mapped until
	// lookups are done with it.
	Path string
	// ASNPath is the path of an MMDB ASN database (MaxMind's GeoLite2
	// ASN, GeoIP2 ISP, DB-IP's ASN Lite, ip-location-db's asn files), or
	// of several separated by commas, chosen per address family as for
	// Path; it gives Location.ASN. Empty: no ASN (0 for every client).
	// Watched and replaced as Path is.
	ASNPath string
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
	// paths are the City or Country files, then the ASN files (asn[i]).
	paths    []string
	asn      []bool
	verify   bool
	interval time.Duration
	log      *slog.Logger

	dbs atomic.Pointer[databases]

	mu sync.Mutex // serialises loads
	// rejected holds, per path, the file last refused, so that polling
	// does not retry (and log) it until it changes.
	rejected []os.FileInfo

	loads, rejections atomic.Uint64
}

// NewResolver loads the configured database. A database that cannot be
// loaded is an error: starting without the GeoIP the operator asked for
// would steer every client as unknown.
func NewResolver(cfg Config) (*Resolver, error) {
	r := &Resolver{verify: cfg.Verify, interval: cfg.PollInterval, log: cfg.Logger}
	for i, list := range []string{cfg.Path, cfg.ASNPath} {
		for p := range strings.SplitSeq(list, ",") {
			if p = strings.TrimSpace(p); p != "" {
				r.paths = append(r.paths, p)
				r.asn = append(r.asn, i == 1)
			}
		}
	}
	r.rejected = make([]os.FileInfo, len(r.paths))
	if r.interval == 0 {
		r.interval = 5 * time.Second
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	r.log = r.log.With("component", "geodata")
	if len(r.paths) > 0 {
		if err := r.Reload(); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Reload opens the database files again, whether or not they changed
// (glbd calls it on SIGHUP). A file that fails to open or verify is
// rejected and the database in use for it stays; lookups carry on
// throughout.
func (r *Resolver) Reload() error {
	if len(r.paths) == 0 {
		return errors.New("geodata: no GeoIP database configured")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for i := range r.paths {
		errs = append(errs, r.load(i))
	}
	return errors.Join(errs...)
}

func (r *Resolver) load(i int) error {
	path := r.paths[i]
	start := time.Now()
	db, err := openDatabase(path, r.verify, r.asn[i])
	old := r.dbs.Load()
	if err != nil {
		r.rejections.Add(1)
		if info, serr := os.Stat(path); serr == nil {
			r.rejected[i] = info
		}
		if old != nil && old.list[i] != nil {
			r.log.Warn("geoip database rejected, keeping the one in use", "path", path, "err", err)
		}
		return fmt.Errorf("geodata: load %w", err)
	}
	r.rejected[i] = nil
	r.loads.Add(1)
	// The old database is not closed here: lookups may still read it. It
	// is unmapped once the last of them has let go of it.
	r.dbs.Store(old.with(i, db, len(r.paths)))
	r.log.Info("geoip database loaded", "path", path, "type", db.kind, "schema", db.schema,
		"built", db.built.UTC().Format(time.DateOnly), "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// Run polls the database file until ctx ends and reloads it when it has
// changed: another file renamed over it, or a new size or modification
// time.
func (r *Resolver) Run(ctx context.Context) {
	if len(r.paths) == 0 || r.interval < 0 {
		return
	}
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			for i := range r.paths {
				r.poll(i)
			}
		}
	}
}

func (r *Resolver) poll(i int) {
	info, err := os.Stat(r.paths[i])
	if err != nil {
		// A missing file is the gap in a non-atomic replacement, or an
		// operator's mistake; either way the database in use stays.
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if dbs := r.dbs.Load(); dbs != nil && dbs.list[i] != nil && sameFile(dbs.list[i].info, info) {
		return
	}
	if r.rejected[i] != nil && sameFile(r.rejected[i], info) {
		return
	}
	_ = r.load(i) // logged; the old database stays
}

func sameFile(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// Info describes the first database in use (a City or Country one, if
// any); false when there is none.
func (r *Resolver) Info() (DatabaseInfo, bool) {
	all := r.Databases()
	if len(all) == 0 {
		return DatabaseInfo{}, false
	}
	return all[0], true
}

// Databases describes every database in use, in the order of Config.Path
// then Config.ASNPath (Schema SchemaASN).
func (r *Resolver) Databases() []DatabaseInfo {
	if r == nil {
		return nil
	}
	dbs := r.dbs.Load()
	if dbs == nil {
		return nil
	}
	var out []DatabaseInfo
	for _, db := range dbs.list {
		if db != nil {
			out = append(out, db.describe())
		}
	}
	return out
}

// databases are the files in use, immutable: a load publishes a new value.
type databases struct {
	list []*database // per path; nil until its first load
	// v4 and v6 are what an IPv4 and an IPv6 address are looked up in,
	// asn4 and asn6 the same for its AS number.
	v4, v6, asn4, asn6 *database
}

// with returns a copy of dbs (nil for none yet) with file i replaced.
func (dbs *databases) with(i int, db *database, n int) *databases {
	next := &databases{list: make([]*database, n)}
	if dbs != nil {
		copy(next.list, dbs.list)
	}
	next.list[i] = db
	for _, d := range next.list {
		if d == nil {
			continue
		}
		v4, v6 := &next.v4, &next.v6
		if d.asn() {
			v4, v6 = &next.asn4, &next.asn6
		}
		if d.ipv4Only && (*v4 == nil || !(*v4).ipv4Only) {
			*v4 = d
		}
		if *v4 == nil {
			*v4 = d
		}
		if !d.ipv4Only && *v6 == nil {
			*v6 = d
		}
	}
	return next
}

// databases returns the City or Country database and the ASN database
// an address of the family of addr is looked up in, nil where there is
// none.
func (r *Resolver) databases(addr netip.Addr) (geo, asn *database) {
	if r == nil {
		return nil, nil
	}
	dbs := r.dbs.Load()
	if dbs == nil {
		return nil, nil
	}
	if addr.Is4() {
		return dbs.v4, dbs.asn4
	}
	return dbs.v6, dbs.asn6
}
