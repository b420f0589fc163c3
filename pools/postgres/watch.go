package postgres

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"

	"github.com/glb-dns/glb/pools"
)

const (
	minBackoff = 100 * time.Millisecond
	// maxBackoff is short: while a replica is being promoted the
	// listener's attempts fail, and a node must hear of changes soon
	// after the new primary takes writes. One connection a node.
	maxBackoff = 2 * time.Second
	// idleCheck is how long the listener waits for a notification before
	// pinging, so that a silently dead connection is noticed.
	idleCheck = 30 * time.Second
)

// ListenerApplicationName is the application_name of the listener
// connection, so that operators can tell it apart in pg_stat_activity.
const ListenerApplicationName = "glb-listener"

// Watch reports configuration changes (NOTIFY glb_config), health
// publications (NOTIFY glb_health), drains (NOTIFY glb_nodes) and words
// fed in (NOTIFY glb_feeds) until ctx ends. One listener connection
// serves every watcher of the store; after it (re)connects it reports the
// current revision with Health, Drain and Feeds set, since anything may
// have changed while it was not listening.
func (s *Store) Watch(ctx context.Context) <-chan pools.Change {
	ch := s.watchers.Add(ctx)
	s.listenOne.Do(func() { go s.listen() })
	return ch
}

func (s *Store) listen() {
	defer close(s.stopped)
	backoff := minBackoff
	for s.bg.Err() == nil {
		err := s.listenOnce(&backoff)
		if s.bg.Err() != nil {
			return
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		s.log.Warn("change listener disconnected", "err", err, "retry_in", wait)
		select {
		case <-time.After(wait):
		case <-s.bg.Done():
			return
		}
		backoff = min(backoff*2, maxBackoff)
	}
}

// listenOnce connects, listens and reports notifications until the
// connection fails; it resets backoff once listening.
func (s *Store) listenOnce(backoff *time.Duration) error {
	cfg := s.pool.Config().ConnConfig.Copy()
	// Waiting for a notification times out every idleCheck on purpose; a
	// deadline keeps the connection, where the default handler would send
	// the server a cancel request each time.
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn()}
	}
	cfg.RuntimeParams["application_name"] = ListenerApplicationName
	ctx, cancel := context.WithTimeout(s.bg, s.opTimeout)
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		cancel()
		return err
	}
	defer func() {
		cctx, ccancel := context.WithTimeout(context.Background(), time.Second)
		defer ccancel()
		conn.Close(cctx)
	}()
	var rev int64
	_, err = conn.Exec(ctx, "listen "+ConfigChannel+"; listen "+HealthChannel+"; listen "+NodesChannel+"; listen "+FeedChannel)
	if err == nil {
		err = conn.QueryRow(ctx, "select revision from glb_revision").Scan(&rev)
	}
	if err == nil {
		err = s.notePrimaryPosition(ctx, conn)
	}
	cancel()
	if err != nil {
		return err
	}
	*backoff = minBackoff
	s.log.Info("change listener connected", "revision", rev)
	s.watchers.Notify(pools.Change{Revision: rev, Health: true, Drain: true, Feeds: true})

	idle := idleCheck
	if s.replica != nil {
		idle = positionEvery
	}
	for {
		wctx, wcancel := context.WithTimeout(s.bg, idle)
		n, err := conn.WaitForNotification(wctx)
		wcancel()
		switch {
		case s.bg.Err() != nil:
			return s.bg.Err()
		case errors.Is(err, context.DeadlineExceeded):
			pctx, pcancel := context.WithTimeout(s.bg, s.opTimeout)
			if s.replica != nil {
				err = s.notePrimaryPosition(pctx, conn) // a ping as well
			} else {
				err = conn.Ping(pctx)
			}
			pcancel()
			if err != nil {
				return err
			}
			continue
		case err != nil:
			return err
		}
		// What the notification announces is at or before the primary's
		// position now: a follow read waits for the replica to reach it.
		pctx, pcancel := context.WithTimeout(s.bg, s.opTimeout)
		err = s.notePrimaryPosition(pctx, conn)
		pcancel()
		if err != nil {
			return err
		}
		switch n.Channel {
		case ConfigChannel:
			rev, _ := strconv.ParseInt(n.Payload, 10, 64)
			s.watchers.Notify(pools.Change{Revision: rev})
		case HealthChannel:
			s.watchers.Notify(pools.Change{Health: true})
		case NodesChannel:
			s.watchers.Notify(pools.Change{Drain: true})
		case FeedChannel:
			s.watchers.Notify(pools.Change{Feeds: true})
		}
	}
}
