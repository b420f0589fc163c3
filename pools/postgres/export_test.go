package postgres

import (
	"context"
	"time"
)

// WithRepackAt sets the fewest origin rows after a node's packed view
// that pack it again, so that a test packs after every change.
func WithRepackAt(n int) Option { return func(s *Store) { s.repackAt = n } }

// BackendPID is the server process of the pooled connection a call gets.
func (s *Store) BackendPID(ctx context.Context) (uint32, error) {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer c.Release()
	return c.Conn().PgConn().PID(), nil
}

// Sleep runs a statement that lasts d on a pooled connection.
func (s *Store) Sleep(ctx context.Context, d time.Duration) error {
	_, err := s.pool.Exec(ctx, "select pg_sleep($1)", d.Seconds())
	return err
}
