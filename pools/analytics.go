package pools

import (
	"context"
	"net/netip"
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
	// before fine into minute rows (across nodes), deletes the rows of
	// buckets starting before keep, and the query samples of minutes
	// before fine. Nodes may call it at once: each row is merged once.
	CompactAnswerCounts(ctx context.Context, fine, keep time.Time) error

	// AddQuerySamples records the queries a node sampled, by minute;
	// recording the same node's minute and subnet again replaces it.
	AddQuerySamples(ctx context.Context, node string, rows []QuerySample) error
	// QuerySamples returns the samples of the load balancer whose
	// analytics.LBKey is lb in minutes starting at or after since, summed
	// across nodes.
	QuerySamples(ctx context.Context, lb uint64, since time.Time) ([]QuerySample, error)
}

// QuerySample is how many queries a node sampled in one minute for one
// load balancer from one client subnet with one query type.
type QuerySample struct {
	Minute time.Time
	// LB is the load balancer's analytics.LBKey.
	LB     uint64
	Subnet netip.Prefix
	Type   uint16
	Count  int64
}

// MinuteOf is the start of the minute bucket t falls in.
func MinuteOf(t time.Time) time.Time { return t.Truncate(time.Minute) }
