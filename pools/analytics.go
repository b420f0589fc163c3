package pools

import (
	"context"
	"time"
)

// AnswerCount is the answers of one cell in one time bucket: a load
// balancer's answers from one pool and origin to clients of one region
// and country, with one response code. Nodes record their own (Node set,
// Step 10); older ones are merged across nodes into minute rows.
type AnswerCount struct {
	// Bucket is the bucket's start; Step its width in seconds.
	Bucket time.Time
	Step   int
	// LoadBalancer and Pool are ids; Origin is the origin's name in the
	// pool. Pool and Origin are empty for an answer no pool gave (the
	// all_down policy), Origin alone for an answer without a record.
	LoadBalancer string
	Pool         string
	Origin       string
	// Region and Country are the client's ("unknown" when nothing
	// located it); Rcode the reply's response code (NOERROR, REFUSED...).
	Region  string
	Country string
	Rcode   string
	Answers int64
}

// AnswerCountSteps are the widths the stores keep: 10-second buckets for
// AnswerFineFor, then minute buckets.
const (
	AnswerStepFine   = 10
	AnswerStepCoarse = 60
	// AnswerFineFor is how long 10-second buckets are kept before they
	// are merged into minute buckets.
	AnswerFineFor = time.Hour
)

// AnalyticsStore keeps the nodes' answer counts for the analytics API.
type AnalyticsStore interface {
	// AddAnswerCounts records rows a node counted (Step 10). Recording
	// the same node's bucket and cell again replaces the count, so a
	// write retried after a lost reply counts nothing twice.
	AddAnswerCounts(ctx context.Context, node string, rows []AnswerCount) error
	// AnswerCounts returns the counts of load balancer lb (an id) in
	// buckets starting in [since, until), summed across nodes, ordered by
	// bucket.
	AnswerCounts(ctx context.Context, lb string, since, until time.Time) ([]AnswerCount, error)
	// CompactAnswerCounts merges the 10-second rows of buckets starting
	// before fine into minute rows (across nodes), and deletes the rows of
	// buckets starting before keep. Nodes may call it at once: each row
	// is merged once.
	CompactAnswerCounts(ctx context.Context, fine, keep time.Time) error
}

// MinuteOf is the start of the minute bucket t falls in.
func MinuteOf(t time.Time) time.Time { return t.Truncate(time.Minute) }
