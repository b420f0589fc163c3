package postgres

import (
	"context"
	"net/netip"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/glb-dns/glb/pools"
)

// AddAnswerCounts records a node's rows in one statement; a row already
// recorded for the node is replaced (a retried write), and of two rows of
// one cell in rows the later counts. A statement a row cost 64 nodes'
// flushes 130 statements a second, the server's costliest (bench/fleet).
func (s *Store) AddAnswerCounts(ctx context.Context, node string, rows []pools.AnswerCount) error {
	if len(rows) == 0 {
		return nil
	}
	type cell struct {
		lb, pool, origin, region, country, rcode string
		step                                     int
		bucket                                   int64
	}
	at := make(map[cell]int, len(rows))
	var (
		lbs, ps, origins, regions, countries, rcodes []string
		steps                                        []int16
		buckets, answers                             []int64
	)
	for _, r := range rows {
		c := cell{r.LoadBalancer, r.Pool, r.Origin, r.Region, r.Country, r.Rcode, r.Step, r.Bucket.Unix()}
		if i, ok := at[c]; ok {
			answers[i] = r.Answers
			continue
		}
		at[c] = len(lbs)
		lbs, ps, origins = append(lbs, c.lb), append(ps, c.pool), append(origins, c.origin)
		regions, countries, rcodes = append(regions, c.region), append(countries, c.country), append(rcodes, c.rcode)
		steps, buckets, answers = append(steps, int16(c.step)), append(buckets, c.bucket), append(answers, r.Answers)
	}
	return s.write(ctx, func(t *txn) error {
		_, err := t.tx.Exec(t.ctx, `insert into glb_answer_counts (load_balancer, step, bucket, node, pool, origin, region, country, rcode, answers)
			select u.lb, u.step, u.bucket, $1, u.pool, u.origin, u.region, u.country, u.rcode, u.answers
			from unnest($2::text[], $3::smallint[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bigint[])
				as u(lb, step, bucket, pool, origin, region, country, rcode, answers)
			on conflict (load_balancer, step, bucket, node, pool, origin, region, country, rcode) do update set answers = excluded.answers`,
			node, lbs, steps, buckets, ps, origins, regions, countries, rcodes, answers)
		return err
	})
}

// upsertRows runs query once per row, with args(row), in one batch of
// one transaction.
func upsertRows[R any](s *Store, ctx context.Context, rows []R, query string, args func(R) []any) error {
	if len(rows) == 0 {
		return nil
	}
	return s.write(ctx, func(t *txn) error {
		b := &pgx.Batch{}
		for _, r := range rows {
			b.Queue(query, args(r)...)
		}
		return t.tx.SendBatch(t.ctx, b).Close()
	})
}

// AnswerCounts sums the nodes' rows of lb per bucket and cell.
func (s *Store) AnswerCounts(ctx context.Context, lb string, since, until time.Time) ([]pools.AnswerCount, error) {
	return selectAll(s, ctx, func(row pgx.CollectableRow) (pools.AnswerCount, error) {
		r := pools.AnswerCount{LoadBalancer: lb}
		var bucket int64
		err := row.Scan(&r.Step, &bucket, &r.Pool, &r.Origin, &r.Region, &r.Country, &r.Rcode, &r.Answers)
		r.Bucket = time.Unix(bucket, 0).UTC()
		return r, err
	}, `select step, bucket, pool, origin, region, country, rcode, sum(answers)::bigint
		from glb_answer_counts where load_balancer = $1 and bucket >= $2 and bucket < $3
		group by step, bucket, pool, origin, region, country, rcode order by bucket, step`, lb, since.Unix(), until.Unix())
}

// CompactAnswerCounts moves old 10-second rows into minute rows in one
// statement: the rows a concurrent compaction deleted first are not seen
// again, so each is merged once.
func (s *Store) CompactAnswerCounts(ctx context.Context, fine, keep time.Time) error {
	return s.write(ctx, func(t *txn) error {
		if _, err := t.tx.Exec(t.ctx, `with gone as (
				delete from glb_answer_counts where step = 10 and bucket < $1
				returning load_balancer, bucket - bucket % 60 as minute, pool, origin, region, country, rcode, answers)
			insert into glb_answer_counts (load_balancer, step, bucket, node, pool, origin, region, country, rcode, answers)
			select load_balancer, 60, minute, '', pool, origin, region, country, rcode, sum(answers) from gone
			group by load_balancer, minute, pool, origin, region, country, rcode
			on conflict (load_balancer, step, bucket, node, pool, origin, region, country, rcode)
			do update set answers = glb_answer_counts.answers + excluded.answers`, pools.MinuteOf(fine).Unix()); err != nil {
			return err
		}
		if _, err := t.tx.Exec(t.ctx, `delete from glb_answer_counts where bucket < $1`, keep.Unix()); err != nil {
			return err
		}
		_, err := t.tx.Exec(t.ctx, `delete from glb_query_samples where minute < $1`, pools.MinuteOf(fine).Unix())
		return err
	})
}

// AddQuerySamples records a node's sampled queries; a row already
// recorded for the node is replaced.
func (s *Store) AddQuerySamples(ctx context.Context, node string, rows []pools.QuerySample) error {
	return upsertRows(s, ctx, rows, `insert into glb_query_samples (node, minute, lb_key, subnet, qtype, queries) values ($1, $2, $3, $4::cidr, $5, $6)
		on conflict (lb_key, minute, node, subnet, qtype) do update set queries = excluded.queries`,
		func(r pools.QuerySample) []any {
			return []any{node, r.Minute.Unix(), int64(r.LB), r.Subnet.String(), int(r.Type), r.Count}
		})
}

// QuerySamples sums the nodes' samples of lb per minute, subnet and type.
func (s *Store) QuerySamples(ctx context.Context, lb uint64, since time.Time) ([]pools.QuerySample, error) {
	return selectAll(s, ctx, func(row pgx.CollectableRow) (pools.QuerySample, error) {
		r := pools.QuerySample{LB: lb}
		var minute int64
		var subnet string
		var qtype int
		if err := row.Scan(&minute, &subnet, &qtype, &r.Count); err != nil {
			return r, err
		}
		r.Minute, r.Type = time.Unix(minute, 0).UTC(), uint16(qtype)
		var err error
		r.Subnet, err = netip.ParsePrefix(subnet)
		return r, err
	}, `select minute, subnet::text, qtype, sum(queries)::bigint from glb_query_samples
		where lb_key = $1 and minute >= $2 group by minute, subnet, qtype order by minute`, int64(lb), since.Unix())
}
