package postgres

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/glb-dns/glb/pools"
)

// A node may follow the store on a streaming replica (WithReadURL): the
// reads that follow the store (Config, Changes, Revision, HealthSince)
// go to it, everything else to the primary, where writes must go and
// where an operator expects to read what was just written.
//
// A replica replays the primary's WAL some time after the primary wrote
// it. The primary says where its WAL is (pg_current_wal_lsn()) on the
// listener connection when a notification arrives and every second; a
// follow read first waits until the replica has replayed
// (pg_last_wal_replay_lsn()) up to the last position the primary gave, so
// that a notification is never answered with the configuration from
// before it. A replica that has not replayed a position maxLag after the
// primary gave it is behind: follow reads go to the primary until it
// catches up.

// DefaultMaxReplicaLag is how far behind the primary a replica may be
// before follow reads go to the primary.
const DefaultMaxReplicaLag = 5 * time.Second

// WithReadURL sends the reads that follow the store to a streaming
// replica at url ("" for none).
func WithReadURL(url string) Option { return func(s *Store) { s.readURL = url } }

// WithMaxReplicaLag sets how long the replica may take to replay what the
// primary wrote before follow reads go to the primary (default
// DefaultMaxReplicaLag).
func WithMaxReplicaLag(d time.Duration) Option { return func(s *Store) { s.maxLag = d } }

// replicaPoll is how often a follow read waiting for the replica reads
// its replay position.
const replicaPoll = 20 * time.Millisecond

// positionEvery is how often the listener asks the primary where its WAL
// is when no notification arrives, so that a replica that stopped
// replaying is noticed without news (heartbeats write without notifying).
const positionEvery = time.Second

// lsnTracker holds the primary positions a replica must reach.
type lsnTracker struct {
	mu sync.Mutex
	// latest is the newest position the primary gave; pending the oldest
	// one the replica was not seen to reach and when the primary gave it
	// (pendingAt zero: none).
	latest, pending uint64
	pendingAt       time.Time
}

// primaryAt records that the primary's WAL was at lsn at now.
func (t *lsnTracker) primaryAt(lsn uint64, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if lsn <= t.latest {
		return
	}
	t.latest = lsn
	if t.pendingAt.IsZero() {
		t.pending, t.pendingAt = lsn, now
	}
}

// replayed records that the replica replayed up to lsn; it returns the
// position to wait for (0: none) and how long the oldest position it has
// not reached has been waiting.
func (t *lsnTracker) replayed(lsn uint64, now time.Time) (want uint64, lag time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case lsn >= t.latest:
		t.pending, t.pendingAt = 0, time.Time{}
		return 0, 0
	case lsn >= t.pending:
		// Past the oldest: the newest is what is left, given no earlier
		// than now as far as this tracker knows.
		t.pending, t.pendingAt = t.latest, now
	}
	return t.latest, now.Sub(t.pendingAt)
}

// openReplica opens the replica's pool.
func (s *Store) openReplica(ctx context.Context) error {
	if s.readURL == "" {
		return nil
	}
	cfg, err := pgxpool.ParseConfig(s.readURL)
	if err != nil {
		return fmt.Errorf("postgres store: read URL: %w", err)
	}
	connectionBounds(&cfg.ConnConfig.Config)
	s.replica, err = pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("postgres store: read URL: %w", err)
	}
	return nil
}

// followPool is where a follow read goes: the replica once it has
// replayed what the primary last said it wrote; the primary when there is
// no replica, when it does not answer, or when it is more than maxLag
// behind.
func (s *Store) followPool(ctx context.Context) *pgxpool.Pool {
	if s.replica == nil {
		return s.pool
	}
	for {
		var lsn uint64
		if err := s.replica.QueryRow(ctx, "select pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0')::int8").Scan(&lsn); err != nil {
			s.fromPrimary(fmt.Sprintf("replica unreadable: %v", err))
			return s.pool
		}
		want, lag := s.positions.replayed(lsn, time.Now())
		if want == 0 {
			s.fromReplica()
			return s.replica
		}
		if lag > s.maxLag {
			s.fromPrimary(fmt.Sprintf("replica %s behind", lag.Round(time.Millisecond)))
			return s.pool
		}
		select {
		case <-ctx.Done():
			return s.pool // the read fails on ctx
		case <-time.After(min(replicaPoll, s.maxLag-lag+time.Millisecond)):
		}
	}
}

// fromPrimary and fromReplica log when follow reads move.
func (s *Store) fromPrimary(why string) {
	if s.onPrimary.CompareAndSwap(false, true) {
		s.log.Warn("following the store on the primary", "why", why)
	}
}

func (s *Store) fromReplica() {
	if s.onPrimary.CompareAndSwap(true, false) {
		s.log.Info("following the store on the replica again")
	}
}

// FollowsReplica says whether the last follow read went to the replica.
func (s *Store) FollowsReplica() bool { return s.replica != nil && !s.onPrimary.Load() }

// follow runs fn in a read-only REPEATABLE READ transaction on the
// follow pool.
func (s *Store) follow(ctx context.Context, fn func(pgx.Tx) error) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	err := pgx.BeginTxFunc(ctx, s.followPool(ctx), pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
	return mapError(err)
}

// notePrimaryPosition asks the primary, on conn, where its WAL is.
func (s *Store) notePrimaryPosition(ctx context.Context, conn *pgx.Conn) error {
	if s.replica == nil {
		return nil
	}
	var lsn uint64
	if err := conn.QueryRow(ctx, "select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::int8").Scan(&lsn); err != nil {
		return err
	}
	s.positions.primaryAt(lsn, time.Now())
	return nil
}

// Server says where the store last wrote and where it follows, for the
// node's report.
func (s *Store) Server() pools.NodeStoreServer {
	v := pools.NodeStoreServer{Follows: "primary"}
	if s.FollowsReplica() {
		v.Follows = "replica"
	}
	if a, ok := s.primary.Load().(string); ok {
		v.Primary = a
	}
	return v
}
