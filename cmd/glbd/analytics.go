package main

import (
	"context"
	"log/slog"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/glb-dns/glb/analytics"
	"github.com/glb-dns/glb/internal/promset"
	"github.com/glb-dns/glb/pools"
)

// maxPendingRows bounds the counts waiting for the store while it is
// unreachable: about an hour of a busy node's rows. Past it the oldest are
// dropped and counted.
const maxPendingRows = 200_000

// compactEvery is how often a node merges old 10-second rows into minute
// rows and drops rows past the retention; every node does, the store
// merges each row once.
const compactEvery = time.Minute

// answerFlusher writes this node's answer counts to the store: each
// 10-second bucket once it is over (and its grace), so that the analytics
// API reads every node's counts from one place. Rows the store refuses
// wait, bounded, and go with the next bucket's.
type answerFlusher struct {
	counts *analytics.Counts
	// sample, when not nil, is written once a minute, each minute once
	// it is over (sampledUntil: the minutes before are written).
	sample       *analytics.Sample
	sampledUntil time.Time
	store        pools.AnalyticsStore
	node         string
	retention    time.Duration
	log          *slog.Logger
	pending      []pools.AnswerCount

	written, dropped, failures prometheus.Counter
}

func newAnswerFlusher(counts *analytics.Counts, sample *analytics.Sample, store pools.AnalyticsStore, node string, retention time.Duration, log *slog.Logger, reg prometheus.Registerer) (*answerFlusher, error) {
	set := promset.New("analytics")
	f := &answerFlusher{counts: counts, sample: sample, store: store, node: node, retention: retention, log: log.With("component", "analytics"),
		written:  set.Counter("rows_written_total", "Answer count rows (bucket, load balancer, pool, origin, region, country, rcode) this node wrote to the store."),
		dropped:  set.Counter("rows_dropped_total", "Answer count rows dropped because the store was unreachable for longer than the pending rows' bound."),
		failures: set.Counter("flush_failures_total", "Writes of answer counts to the store that failed (the rows wait for the next)."),
	}
	if err := set.Register(reg); err != nil {
		return nil, err
	}
	for _, c := range []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "glb", Subsystem: "analytics", Name: "answers_placeless_total",
			Help: "Answers counted without their client's region and country because a bucket's table was full (--analytics-cells)."}, func() float64 { return float64(counts.Placeless()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "glb", Subsystem: "analytics", Name: "answers_uncounted_total",
			Help: "Answers not counted at all because a bucket's table was full (--analytics-cells)."}, func() float64 { return float64(counts.Lost()) }),
	} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// run drains each bucket Grace after it ends, writes, and compacts once a
// minute, until ctx ends; then it drains what is left, the bucket being
// counted too, and writes it once more.
func (f *answerFlusher) run(ctx context.Context) {
	next := analytics.Bucket(time.Now())
	var compacted time.Time
	for {
		wait := time.NewTimer(time.Until(analytics.BucketStart(next + 1).Add(analytics.Grace)))
		select {
		case <-ctx.Done():
			wait.Stop()
			f.final(next)
			return
		case <-wait.C:
		}
		now := time.Now()
		cur := analytics.Bucket(now)
		if oldest := cur - 3; next < oldest {
			// The tables of the buckets between were reused: this loop
			// was stopped (a suspended machine) for longer than they last.
			f.log.Warn("answer counts of buckets not drained in time are lost", "buckets", oldest-next)
			next = oldest
		}
		for ; f.counts != nil && !analytics.BucketStart(next+1).Add(analytics.Grace).After(now); next++ {
			f.pending = append(f.pending, f.counts.Drain(next)...)
		}
		f.write(ctx)
		f.writeSample(ctx, now)
		if now.Sub(compacted) >= compactEvery {
			compacted = now
			cctx, cancel := context.WithTimeout(ctx, time.Minute)
			if err := f.store.CompactAnswerCounts(cctx, now.Add(-pools.AnswerFineFor), now.Add(-f.retention)); err != nil && ctx.Err() == nil {
				f.log.Warn("compacting answer counts", "err", err)
			}
			cancel()
		}
	}
}

// final drains every bucket from next to the one being counted and writes
// them, within a few seconds, at shutdown.
func (f *answerFlusher) final(next int64) {
	for cur := analytics.Bucket(time.Now()); f.counts != nil && next <= cur; next++ {
		f.pending = append(f.pending, f.counts.Drain(next)...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	f.write(ctx)
}

func (f *answerFlusher) write(ctx context.Context) {
	if len(f.pending) == 0 || f.counts == nil {
		return
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := f.store.AddAnswerCounts(wctx, f.node, f.pending); err != nil {
		f.failures.Inc()
		if ctx.Err() == nil {
			f.log.Warn("writing answer counts; they wait for the next bucket", "rows", len(f.pending), "err", err)
		}
		if over := len(f.pending) - maxPendingRows; over > 0 {
			f.dropped.Add(float64(over))
			f.pending = append(f.pending[:0], f.pending[over:]...)
		}
		return
	}
	f.written.Add(float64(len(f.pending)))
	f.pending = f.pending[:0]
}

// writeSample writes the queries sampled in the minutes that ended since
// the last write, per minute, load balancer, subnet and type. A failed
// write is tried again at the next bucket: the ring still holds them.
func (f *answerFlusher) writeSample(ctx context.Context, now time.Time) {
	minute := pools.MinuteOf(now)
	if f.sample == nil || !minute.After(f.sampledUntil) {
		return
	}
	if f.sampledUntil.IsZero() {
		f.sampledUntil = minute.Add(-pools.AnswerFineFor)
	}
	type key struct {
		minute int64
		lb     uint64
		subnet netip.Prefix
		qtype  uint16
	}
	sums := map[key]int64{}
	for _, q := range f.sample.Recent(f.sampledUntil) {
		if q.At.Before(minute) {
			sums[key{pools.MinuteOf(q.At).Unix(), q.LB, q.Subnet, q.Type}]++
		}
	}
	rows := make([]pools.QuerySample, 0, len(sums))
	for k, n := range sums {
		rows = append(rows, pools.QuerySample{Minute: time.Unix(k.minute, 0).UTC(), LB: k.lb, Subnet: k.subnet, Type: k.qtype, Count: n})
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := f.store.AddQuerySamples(wctx, f.node, rows); err != nil {
		f.failures.Inc()
		if ctx.Err() == nil {
			f.log.Warn("writing the query sample; it is tried again", "rows", len(rows), "err", err)
		}
		return
	}
	f.sampledUntil = minute
}
