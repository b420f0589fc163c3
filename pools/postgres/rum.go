package postgres

import (
	"context"
	"net/netip"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/glb-dns/glb/pools"
)

// Real user measurements live in glb_rum_samples and glb_rum_tokens
// (migration 023).

// AddRUMSamples records a node's histograms; see pools.RUMStore.
func (s *Store) AddRUMSamples(ctx context.Context, node string, rows []pools.RUMSamples) error {
	return upsertRows(s, ctx, rows, `insert into glb_rum_samples (node, minute, network, pool, counts) values ($1, $2, $3::cidr, $4, $5)
		on conflict (minute, node, network, pool) do update set counts = excluded.counts`,
		func(r pools.RUMSamples) []any {
			return []any{node, pools.MinuteOf(r.Minute).Unix(), r.Network.String(), r.Pool, r.Counts}
		})
}

// RUMSamples sums every node's histograms since, bucket by bucket; see
// pools.RUMStore.
func (s *Store) RUMSamples(ctx context.Context, since time.Time) ([]pools.RUMSamples, error) {
	return selectAll(s, ctx, func(row pgx.CollectableRow) (pools.RUMSamples, error) {
		var r pools.RUMSamples
		var network string
		err := row.Scan(&network, &r.Pool, &r.Counts)
		if err == nil {
			r.Network, err = netip.ParsePrefix(network)
		}
		return r, err
	}, `select network::text, pool, array_agg(total order by i)::integer[] from (
			select network, pool, c.i, sum(c.n)::integer as total
			from glb_rum_samples, unnest(counts) with ordinality as c(n, i)
			where minute >= $1 group by network, pool, c.i) s
		group by network, pool order by network, pool`, since.Unix())
}

// AddRUMTokens records what a node saw of beacon tokens; see
// pools.RUMStore.
func (s *Store) AddRUMTokens(ctx context.Context, rows []pools.RUMToken) error {
	return upsertRows(s, ctx, rows, `insert into glb_rum_tokens (token, resolver, network, seen) values ($1, $2::cidr, $3::cidr, $4)
		on conflict (token) do update set resolver = coalesce(excluded.resolver, glb_rum_tokens.resolver),
			network = coalesce(excluded.network, glb_rum_tokens.network), seen = greatest(excluded.seen, glb_rum_tokens.seen)`,
		func(r pools.RUMToken) []any {
			return []any{r.Token, prefixOrNil(r.Resolver), prefixOrNil(r.Network), r.Seen.Unix()}
		})
}

func prefixOrNil(p netip.Prefix) any {
	if !p.IsValid() {
		return nil
	}
	return p.String()
}

// RUMResolverLinks counts the tokens both sides named; see
// pools.RUMStore.
func (s *Store) RUMResolverLinks(ctx context.Context, since time.Time) ([]pools.RUMResolverLink, error) {
	return selectAll(s, ctx, func(row pgx.CollectableRow) (pools.RUMResolverLink, error) {
		var r pools.RUMResolverLink
		var resolver, network string
		err := row.Scan(&resolver, &network, &r.Reports)
		if err == nil {
			r.Resolver, err = netip.ParsePrefix(resolver)
		}
		if err == nil {
			r.Network, err = netip.ParsePrefix(network)
		}
		return r, err
	}, `select resolver::text, network::text, count(*) from glb_rum_tokens
		where seen >= $1 and resolver is not null and network is not null
		group by resolver, network order by resolver, network`, since.Unix())
}

// PruneRUM deletes samples and tokens older than before.
func (s *Store) PruneRUM(ctx context.Context, before time.Time) error {
	return s.write(ctx, func(t *txn) error {
		if _, err := t.tx.Exec(t.ctx, `delete from glb_rum_samples where minute < $1`, before.Unix()); err != nil {
			return err
		}
		_, err := t.tx.Exec(t.ctx, `delete from glb_rum_tokens where seen < $1`, before.Unix())
		return err
	})
}
