// Package postgres is the shared store for many glbd nodes: the
// configuration in PostgreSQL (schema in migrations/), one transaction per
// write, changes announced with NOTIFY and watched with LISTEN.
package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/glb-dns/glb/pools"
)

// Notification channels: the payload of glb_config is the new global
// revision, that of glb_health the publishing node, that of glb_nodes the
// node a drain was asked or lifted of.
const (
	ConfigChannel = "glb_config"
	HealthChannel = "glb_health"
	NodesChannel  = "glb_nodes"
)

// Store implements pools.Store over a pgx pool.
type Store struct {
	pool      *pgxpool.Pool
	log       *slog.Logger
	opTimeout time.Duration
	now       func() time.Time
	// repackAt is the fewest origin rows after a node's packed view that
	// pack it again (minRepack).
	repackAt int

	// The replica the follow reads go to (replica.go); nil for none.
	readURL   string
	replica   *pgxpool.Pool
	maxLag    time.Duration
	positions lsnTracker
	onPrimary atomic.Bool
	// primary is the address of the server the last write went to.
	primary atomic.Value

	watchers  pools.Watchers
	listenOne sync.Once
	stop      context.CancelFunc
	stopped   chan struct{}
	bg        context.Context
}

var _ pools.Store = (*Store)(nil)

// Option configures Open.
type Option func(*Store)

// WithLogger sets the logger of the change listener (reconnects).
func WithLogger(l *slog.Logger) Option { return func(s *Store) { s.log = l } }

// WithTimeout bounds every call that has no earlier deadline (default 10s),
// so that a database that stopped answering yields ErrUnavailable rather
// than a hung caller.
func WithTimeout(d time.Duration) Option { return func(s *Store) { s.opTimeout = d } }

// Unless the URL sets connect_timeout, a new connection has dialTimeout
// to reach the server and startupTimeout for the whole of it. The two
// differ because their failures do: a host that drops packets is found
// by the dial, at once for the next host of a multi-host URL and for a
// node cut from its store; a server that accepted the connection but is
// slow to start its backend (the postmaster forks one per connection, and
// 64 nodes connecting at once queue behind each other) is only made
// slower by a client that gives up, because the server forks for a
// connection still queued after its client left, and the client's retry
// queues again. With 3 s for the whole, 64 nodes starting together never
// got their connections (docs/operations.md).
const (
	dialTimeout    = 3 * time.Second
	startupTimeout = 15 * time.Second
)

// cancelGrace is how long a call whose context ended waits for the
// statement it sent to end by itself before the connection is closed
// under it. Closing it costs the server a new backend for the next call,
// which under load is what made calls time out in the first place.
const cancelGrace = 2 * time.Second

// connectionBounds applies dialTimeout, startupTimeout and cancelGrace
// to cfg.
func connectionBounds(cfg *pgconn.Config) {
	if cfg.ConnectTimeout == 0 {
		d := &net.Dialer{Timeout: dialTimeout, KeepAlive: 5 * time.Minute}
		cfg.DialFunc = d.DialContext
		cfg.ConnectTimeout = startupTimeout
	}
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn(), DeadlineDelay: cancelGrace}
	}
}

// Open prepares a store for the database at url (a PostgreSQL URL or
// key=value string). It does not wait for the database: a node must start
// while the control plane is down, so calls fail with ErrUnavailable until
// it answers (Ping tells). The schema must be migrated (migrations.Up).
func Open(ctx context.Context, url string, opts ...Option) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	connectionBounds(&cfg.ConnConfig.Config)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	s := &Store{
		pool:      pool,
		log:       slog.New(slog.DiscardHandler),
		opTimeout: 10 * time.Second,
		repackAt:  minRepack,
		now:       time.Now,
		maxLag:    DefaultMaxReplicaLag,
		stopped:   make(chan struct{}),
	}
	for _, o := range opts {
		o(s)
	}
	if err := s.openReplica(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	s.log = s.log.With("component", "store.postgres")
	s.bg, s.stop = context.WithCancel(context.Background())
	return s, nil
}

// Close stops the listener, closes every watch channel and the pool.
func (s *Store) Close() error {
	s.stop()
	// A listener that never started must not start now; one that did
	// closes stopped when it returns.
	s.listenOne.Do(func() { close(s.stopped) })
	<-s.stopped
	s.watchers.Close()
	s.pool.Close()
	if s.replica != nil {
		s.replica.Close()
	}
	return nil
}

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	return mapError(s.pool.Ping(ctx))
}

func (s *Store) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok && time.Until(d) < s.opTimeout {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, s.opTimeout)
}

func table(k pools.Kind) (string, error) {
	if pools.New(k) == nil {
		return "", fmt.Errorf("unknown kind %q: %w", k, pools.ErrNotFound)
	}
	return string(k), nil // tables are named after their kind
}

func decode(k pools.Kind, doc []byte) (pools.Object, error) {
	o := pools.New(k)
	if err := json.Unmarshal(doc, o); err != nil {
		return nil, fmt.Errorf("decode %s: %w", k.Singular(), err)
	}
	return o, nil
}

// read runs fn in a read-only REPEATABLE READ transaction: one consistent
// view of everything it reads.
func (s *Store) read(ctx context.Context, fn func(pgx.Tx) error) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
	return mapError(err)
}

// write runs fn in one read-write transaction.
func (s *Store) write(ctx context.Context, fn func(*txn) error) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if c := tx.Conn().PgConn().Conn(); c != nil {
			// After a failover with a multi-host URL, the new primary.
			s.primary.Store(c.RemoteAddr().String())
		}
		return fn(&txn{ctx: ctx, tx: tx})
	})
	return mapError(err)
}

// Get returns one object or pools.ErrNotFound.
func (s *Store) Get(ctx context.Context, k pools.Kind, id string) (pools.Object, error) {
	var o pools.Object
	err := s.read(ctx, func(tx pgx.Tx) error {
		var err error
		o, err = (&txn{ctx: ctx, tx: tx}).Get(k, id)
		return err
	})
	return o, err
}

// List returns one page of a kind ordered by (created_on, id).
func (s *Store) List(ctx context.Context, k pools.Kind, p pools.Page) (pools.ListResult, error) {
	t, err := table(k)
	if err != nil {
		return pools.ListResult{}, err
	}
	offset, limit := p.Bounds()
	res := pools.ListResult{Items: []pools.Object{}}
	err = s.read(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, "select count(*) from "+t).Scan(&res.TotalCount); err != nil {
			return err
		}
		return eachOf(ctx, tx, k, func(o pools.Object) { res.Items = append(res.Items, o) },
			"select doc from "+t+" order by created_on, id limit $1 offset $2", limit, offset)
	})
	return res, err
}

// Create stores a new object; see pools.CreateIn for the rules.
func (s *Store) Create(ctx context.Context, o pools.Object) (pools.Object, error) {
	var out pools.Object
	err := s.audited(ctx, o.Kind(), func(t *pools.Recorder) (string, int64, error) {
		var rev int64
		var err error
		out, rev, err = pools.CreateIn(t, o, s.now())
		if err != nil {
			return "", 0, err
		}
		return out.ObjectMeta().ID, rev, nil
	})
	return out, err
}

// Replace overwrites an object; see pools.ReplaceIn for the rules.
func (s *Store) Replace(ctx context.Context, o pools.Object, ifRevision int64) (pools.Object, error) {
	var out pools.Object
	err := s.audited(ctx, o.Kind(), func(t *pools.Recorder) (string, int64, error) {
		tx := t.Tx.(*txn)
		list := func() ([]pools.Rollout, error) { return readAll[pools.Rollout](tx.ctx, tx.tx, pools.KindRollout) }
		if err := pools.RefuseMoving(o, list); err != nil {
			return "", 0, err
		}
		var rev int64
		var err error
		out, rev, err = pools.ReplaceIn(t, o, ifRevision, s.now())
		return o.ObjectMeta().ID, rev, err
	})
	return out, err
}

// Delete removes an object; see pools.DeleteIn for the rules.
func (s *Store) Delete(ctx context.Context, k pools.Kind, id string, ifRevision int64) error {
	return s.audited(ctx, k, func(t *pools.Recorder) (string, int64, error) {
		rev, err := pools.DeleteIn(t, k, id, ifRevision, s.now())
		return id, rev, err
	})
}

// collect runs query and scans every row it returns with scan.
func collect[T any](ctx context.Context, tx pgx.Tx, scan pgx.RowToFunc[T], query string, args ...any) ([]T, error) {
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scan)
}

// selectAll is collect in a read transaction of its own.
func selectAll[T any](s *Store, ctx context.Context, scan pgx.RowToFunc[T], query string, args ...any) ([]T, error) {
	var out []T
	err := s.read(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = collect(ctx, tx, scan, query, args...)
		return err
	})
	return out, err
}

// each calls fn on every object of a kind in creation order.
func each(ctx context.Context, tx pgx.Tx, k pools.Kind, fn func(pools.Object)) error {
	return eachOf(ctx, tx, k, fn, "select doc from "+string(k)+" order by created_on, id")
}

// eachOf calls fn on each object of kind k whose doc query selects, in
// the order selected.
func eachOf(ctx context.Context, tx pgx.Tx, k pools.Kind, fn func(pools.Object), query string, args ...any) error {
	docs, err := collect(ctx, tx, pgx.RowTo[[]byte], query, args...)
	if err != nil {
		return err
	}
	objs := make([]pools.Object, len(docs))
	for i, d := range docs {
		if objs[i], err = decode(k, d); err != nil {
			return err
		}
	}
	if err := attachObjects(ctx, tx, objs); err != nil {
		return err
	}
	for _, o := range objs {
		fn(o)
	}
	return nil
}

func readAll[T any](ctx context.Context, tx pgx.Tx, k pools.Kind) ([]T, error) {
	out := []T{}
	if err := each(ctx, tx, k, func(o pools.Object) { out = append(out, *any(o).(*T)) }); err != nil {
		return nil, err
	}
	return out, nil
}

// Config reads everything in one read-only REPEATABLE READ transaction,
// on the replica when there is one (replica.go).
func (s *Store) Config(ctx context.Context) (*pools.Config, error) {
	cfg := pools.NewConfig()
	err := s.follow(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, "select revision from glb_revision").Scan(&cfg.Revision); err != nil {
			return err
		}
		for _, k := range pools.StoredKinds {
			if err := each(ctx, tx, k, func(o pools.Object) { cfg.Add(o) }); err != nil {
				return err
			}
		}
		var err error
		cfg.DNSSECKeys, err = allZoneKeys(ctx, tx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

// Revision is the global configuration revision, on the replica when
// there is one.
func (s *Store) Revision(ctx context.Context) (int64, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	var rev int64
	err := s.followPool(ctx).QueryRow(ctx, "select revision from glb_revision").Scan(&rev)
	return rev, mapError(err)
}
