package postgres

// WithRepackAt sets the fewest origin rows after a node's packed view
// that pack it again, so that a test packs after every change.
func WithRepackAt(n int) Option { return func(s *Store) { s.repackAt = n } }
