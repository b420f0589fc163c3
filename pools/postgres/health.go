package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/glb-dns/glb/pools"
)

// Health lives in node_heartbeat and node_origin_health (migration 006;
// 010 adds each monitor's view for pools with a monitor group), and, since
// 024, node_health_view: a full publication is one packed row, not a row
// per origin, and node_origin_health holds the changes since.

// beatSQL records a heartbeat; $4 moves the epoch (a full publication),
// $5 the seq (origin rows follow). The row lock it takes orders the
// node's publications.
const beatSQL = `
	insert into node_heartbeat as h (node, region, published, epoch, seq) values ($1, $2, $3, 1, $5::int)
	on conflict (node) do update set region = excluded.region, published = excluded.published,
		epoch = h.epoch + $4::int, seq = h.seq + $5::int
	returning epoch, seq, xmax = 0`

const upsertOriginsSQL = `
	insert into node_origin_health (node, pool, origin, seq, gone, healthy, reason, rtt_ns, monitors)
	select $1, u.pool, u.origin, $2, false, u.healthy, u.reason, u.rtt, nullif(u.monitors, '')::jsonb
	from unnest($3::text[], $4::text[], $5::bool[], $6::text[], $7::bigint[], $8::text[])
		as u(pool, origin, healthy, reason, rtt, monitors)
	on conflict (node, pool, origin) do update set seq = excluded.seq, gone = false,
		healthy = excluded.healthy, reason = excluded.reason, rtt_ns = excluded.rtt_ns, monitors = excluded.monitors`

// withdrawSQL marks origins the node published as gone, after the states
// of the same update: an origin in both ends withdrawn. An origin never
// published leaves no row.
const withdrawSQL = `
	update node_origin_health set seq = $2, gone = true
	where node = $1 and not gone and (pool, origin) in (select * from unnest($3::text[], $4::text[]))`

// The packed view (node_health_view, migration 024; pack.go): a node's
// live states in one value, as of a seq of its epoch, so that a reader
// without a cursor reads one row for the node and the origin rows after
// that seq, not every origin's row.

const packSQL = `
	insert into node_health_view (node, epoch, seq, n, packed) values ($1, $2, $3, $4, $5)
	on conflict (node) do update set epoch = excluded.epoch, seq = excluded.seq, n = excluded.n, packed = excluded.packed`

// packedSQL tells how far the node's view of this epoch is behind: its
// size, its seq and the rows after it (no row: none of this epoch).
const packedSQL = `
	select v.n, v.seq, (select count(*) from node_origin_health r where r.node = v.node and r.seq > v.seq)
	from node_health_view v where v.node = $1 and v.epoch = $2`

// minRepack is the fewest rows after a view that repack it (the store's
// repackAt, which tests lower).
const minRepack = 256

// repack packs the node's view again, after a publication of changes,
// when the rows after it are as many as an eighth of its states (at least
// repackAt): a reader without a cursor then reads at most about that many
// rows besides the view. The new view is the old one and the rows after
// it; without a view of the epoch (a node of an older version published
// it row by row), the node's live rows.
func (s *Store) repack(ctx context.Context, tx pgx.Tx, node string, epoch, seq int64) error {
	var n, after int
	var vseq int64
	err := tx.QueryRow(ctx, packedSQL, node, epoch).Scan(&n, &vseq, &after)
	var m merge
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		vseq = -1
	case err != nil:
		return err
	case after < max(s.repackAt, n/8):
		return nil
	default:
		var packed []byte
		if err := tx.QueryRow(ctx, "select packed from node_health_view where node = $1", node).Scan(&packed); err != nil {
			return err
		}
		states, err := unpack(packed, time.Time{}, interner{})
		if err != nil {
			return err
		}
		m.start(states)
	}
	rows, err := tx.Query(ctx, `select gone, `+originColumns+` from node_origin_health o
		where o.node = $1 and o.seq > $2 and ($2 >= 0 or not o.gone)`, node, vseq)
	if err != nil {
		return err
	}
	for rows.Next() {
		var gone bool
		var o originRow
		if err := rows.Scan(append([]any{&gone}, o.dest()...)...); err != nil {
			rows.Close()
			return err
		}
		var st pools.OriginState
		if !gone {
			if st, err = o.state(time.Time{}); err != nil {
				rows.Close()
				return err
			}
		}
		m.apply(pools.OriginKey{Pool: *o.pool, Origin: *o.origin}, st, gone)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	r, err := originRows(pools.HealthUpdate{Origins: m.result()})
	if err != nil {
		return err
	}
	return writePacked(ctx, tx, node, epoch, seq, r)
}

// merge applies rows, in seq order, to a packed view's states.
type merge struct {
	states  []pools.OriginState
	at      map[pools.OriginKey]int
	dropped map[int]bool
}

func (m *merge) start(states []pools.OriginState) { *m = merge{states: states} }

// apply replaces, adds or withdraws (gone) the origin's state.
func (m *merge) apply(k pools.OriginKey, st pools.OriginState, gone bool) {
	if m.at == nil {
		m.at = make(map[pools.OriginKey]int, len(m.states))
		for i, st := range m.states {
			m.at[st.Key()] = i
		}
	}
	i, ok := m.at[k]
	switch {
	case gone && ok:
		if m.dropped == nil {
			m.dropped = map[int]bool{}
		}
		m.dropped[i] = true
		delete(m.at, k)
	case gone:
	case ok:
		m.states[i] = st
	default:
		m.at[k] = len(m.states)
		m.states = append(m.states, st)
	}
}

// result is the states less those withdrawn.
func (m *merge) result() []pools.OriginState {
	if len(m.dropped) == 0 {
		return m.states
	}
	out := m.states[:0]
	for i, st := range m.states {
		if !m.dropped[i] {
			out = append(out, st)
		}
	}
	return out
}

func writePacked(ctx context.Context, tx pgx.Tx, node string, epoch, seq int64, r rowArrays) error {
	b, err := pack(r)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, packSQL, node, epoch, seq, len(r.pool), b)
	return err
}

// PublishHealth records u's heartbeat and changes. A heartbeat alone is
// one statement and notifies nobody: readers judge freshness on their own
// timer; changes notify glb_health.
func (s *Store) PublishHealth(ctx context.Context, u pools.HealthUpdate) error {
	if u.Node == "" {
		return &pools.ValidationError{Errors: []pools.FieldError{{Path: "node", Message: "required"}}}
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	full, changed := b2i(u.Full), b2i(u.Changed())
	if !u.Changed() {
		var epoch, seq int64
		var inserted bool
		err := s.pool.QueryRow(ctx, beatSQL, u.Node, u.Region, u.Published, full, changed).Scan(&epoch, &seq, &inserted)
		return mapError(err)
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var epoch, seq int64
		var inserted bool
		if err := tx.QueryRow(ctx, beatSQL, u.Node, u.Region, u.Published, full, changed).Scan(&epoch, &seq, &inserted); err != nil {
			return err
		}
		rows, err := originRows(u)
		if err != nil {
			return err
		}
		if u.Full {
			// The whole view is the packed row alone: the node's rows
			// are of its last epoch.
			if !inserted {
				if _, err := tx.Exec(ctx, "delete from node_origin_health where node = $1", u.Node); err != nil {
					return err
				}
			}
			err = writePacked(ctx, tx, u.Node, epoch, seq, rows)
		} else {
			err = s.publishChanges(ctx, tx, u, rows, epoch, seq)
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "select pg_notify('"+HealthChannel+"', $1)", u.Node)
		return err
	})
	return mapError(err)
}

// publishChanges writes u's changes as rows of seq, withdraws its removed
// origins and packs the view again when enough rows follow it.
func (s *Store) publishChanges(ctx context.Context, tx pgx.Tx, u pools.HealthUpdate, rows rowArrays, epoch, seq int64) error {
	if len(rows.pool) > 0 {
		if _, err := tx.Exec(ctx, upsertOriginsSQL, u.Node, seq, rows.pool, rows.origin,
			rows.healthy, rows.reason, rows.rtt, rows.monitors); err != nil {
			return err
		}
	}
	if len(u.Removed) > 0 {
		if err := withdraw(ctx, tx, u, epoch, seq); err != nil {
			return err
		}
	}
	return s.repack(ctx, tx, u.Node, epoch, seq)
}

// withdraw marks the removed origins that have a live row gone, then
// writes a gone row for each of the others that the packed view holds
// without a row since. An origin never published leaves no row.
func withdraw(ctx context.Context, tx pgx.Tx, u pools.HealthUpdate, epoch, seq int64) error {
	poolIDs, origins := make([]string, len(u.Removed)), make([]string, len(u.Removed))
	for i, k := range u.Removed {
		poolIDs[i], origins[i] = k.Pool, k.Origin
	}
	rows, err := tx.Query(ctx, withdrawSQL+" returning pool, origin", u.Node, seq, poolIDs, origins)
	if err != nil {
		return err
	}
	done := map[pools.OriginKey]bool{}
	for rows.Next() {
		var k pools.OriginKey
		if err := rows.Scan(&k.Pool, &k.Origin); err != nil {
			rows.Close()
			return err
		}
		done[k] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(done) == len(u.Removed) {
		return nil
	}
	var packed []byte
	err = tx.QueryRow(ctx, "select packed from node_health_view where node = $1 and epoch = $2", u.Node, epoch).Scan(&packed)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // rows only: withdrawSQL did it all
	}
	if err != nil {
		return err
	}
	states, err := unpack(packed, time.Time{}, interner{})
	if err != nil {
		return err
	}
	inView := make(map[pools.OriginKey]bool, len(states))
	for _, st := range states {
		inView[st.Key()] = true
	}
	poolIDs, origins = poolIDs[:0], origins[:0]
	for _, k := range u.Removed {
		if !done[k] && inView[k] {
			done[k] = true
			poolIDs, origins = append(poolIDs, k.Pool), append(origins, k.Origin)
		}
	}
	if len(poolIDs) == 0 {
		return nil
	}
	// A row already there is an earlier change: withdrawn already, or
	// marked by withdrawSQL.
	_, err = tx.Exec(ctx, `
		insert into node_origin_health (node, pool, origin, seq, gone, healthy, reason, rtt_ns)
		select $1, u.pool, u.origin, $2, true, false, '', 0 from unnest($3::text[], $4::text[]) as u(pool, origin)
		on conflict (node, pool, origin) do nothing`, u.Node, seq, poolIDs, origins)
	return err
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// rowArrays are origin states as columns, for unnest.
type rowArrays struct {
	pool, origin, reason []string
	monitors             []string // JSON, or empty for none
	healthy              []bool
	rtt                  []int64
}

// originRows lists u's states, an origin named twice counting once, as
// its last mention: one statement may not write a row twice.
func originRows(u pools.HealthUpdate) (rowArrays, error) {
	var r rowArrays
	at := make(map[pools.OriginKey]int, len(u.Origins))
	for _, st := range u.Origins {
		i, ok := at[st.Key()]
		if !ok {
			i = len(r.pool)
			at[st.Key()] = i
			r.pool, r.origin = append(r.pool, st.Pool), append(r.origin, st.Origin)
			r.healthy, r.reason, r.rtt = append(r.healthy, false), append(r.reason, ""), append(r.rtt, 0)
			r.monitors = append(r.monitors, "")
		}
		r.healthy[i], r.reason[i], r.rtt[i] = st.Healthy, st.Reason, int64(max(st.RTT, 0))
		r.monitors[i] = ""
		if len(st.Monitors) > 0 {
			b, err := json.Marshal(st.Monitors)
			if err != nil {
				return r, err
			}
			r.monitors[i] = string(b)
		}
	}
	return r, nil
}

// decodeMonitors reads the monitors column (null for none).
func decodeMonitors(b []byte) ([]pools.MonitorState, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var out []pools.MonitorState
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("decode monitors of a health row: %w", err)
	}
	return out, nil
}

// originColumns are the columns of node_origin_health that make an
// origin's state, in the order originRow.dest scans them.
const originColumns = "o.pool, o.origin, o.healthy, o.reason, o.rtt_ns, o.monitors"

// originRow is a node_origin_health row as the reads left-join it to the
// heartbeats: every column nil for a heartbeat without one.
type originRow struct {
	pool, origin, reason *string
	healthy              *bool
	rtt                  *int64
	monitors             []byte
}

// dest are the scan destinations of originColumns.
func (r *originRow) dest() []any {
	return []any{&r.pool, &r.origin, &r.healthy, &r.reason, &r.rtt, &r.monitors}
}

// state is the origin's state the row holds, confirmed when its node last
// published.
func (r *originRow) state(published time.Time) (pools.OriginState, error) {
	ms, err := decodeMonitors(r.monitors)
	if err != nil {
		return pools.OriginState{}, err
	}
	return pools.OriginState{Pool: *r.pool, Origin: *r.origin, Healthy: *r.healthy, Reason: *r.reason,
		RTT: time.Duration(*r.rtt), CheckedAt: published, Monitors: ms}, nil
}

// sinceSQL reads, in one statement (one snapshot), every heartbeat (or
// those of the nodes $4 names) and the origin rows each reader has not
// seen: rows after its cursor; or, when
// the cursor is missing or of another epoch (since = -1, a full update),
// the node's packed view (a first row, oseq -1) and its rows after the
// view's seq, gone ones included; or, without a view of the epoch, all
// the node's live rows.
//
// The origin rows are a lateral subquery fenced with "offset 0", so that
// each heartbeat's rows come from the (node, seq) index, from its
// cursor on: the plain join, flattened, hashed every node's every row
// (N × M rows per read, every node reading every second: bench/fleet
// measured 127 ms a read for 8 nodes × 1,000 origins, 0.6 ms this way).
const sinceSQL = `
	with c as (select * from unnest($1::text[], $2::bigint[], $3::bigint[]) as c(node, epoch, seq)),
	h as (select h.*, coalesce((select c.seq from c where c.node = h.node and c.epoch = h.epoch and c.seq <= h.seq), -1) as since
		from node_heartbeat h where $4::text[] is null or h.node = any($4)),
	hv as (select h.*, v.seq as vseq from h left join node_health_view v on h.since < 0 and v.node = h.node and v.epoch = h.epoch)
	select h.node, h.region, h.published, h.epoch, h.seq, h.since < 0, o.packed, o.gone, ` + originColumns + `
	from hv h left join lateral (
		select -1::bigint as oseq, v.packed, null::bool as gone, null::text as pool, null::text as origin,
			null::bool as healthy, null::text as reason, null::bigint as rtt_ns, null::jsonb as monitors
		from node_health_view v where h.vseq is not null and v.node = h.node
		union all
		(select o.seq, null, o.gone, o.pool, o.origin, o.healthy, o.reason, o.rtt_ns, o.monitors
		from node_origin_health o
		where o.node = h.node and o.seq > (case when h.since >= 0 then h.since else coalesce(h.vseq, 0) end)
			and (h.since >= 0 or h.vseq is not null or not o.gone) offset 0)) o on true
	order by h.node, o.oseq`

// HealthSince returns every node's changes since cursors, from the
// replica when there is one.
//
// Most reads find few nodes with news, or none: a heartbeat without news
// moves its time without a notification, and followers read on their own
// timer to see it, lest its node's votes go stale. So the heartbeats are
// read alone first, and sinceSQL only for the nodes whose heartbeat is not
// at its cursor (new, restarted, or with rows after it). Each node's
// update is of one snapshot; different nodes' may be of two.
func (s *Store) HealthSince(ctx context.Context, cursors map[string]pools.HealthCursor) ([]pools.HealthUpdate, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	q := s.followPool(ctx)
	beats, err := heartbeats(ctx, q)
	if err != nil {
		return nil, err
	}
	var moved []string
	for _, b := range beats {
		if c, ok := cursors[b.Node]; !ok || c != b.Cursor {
			moved = append(moved, b.Node)
		}
	}
	if len(moved) == 0 {
		return beats, nil
	}
	ups, err := healthSince(ctx, q, cursors, moved)
	if err != nil {
		return nil, err
	}
	read := make(map[string]pools.HealthUpdate, len(ups))
	for _, u := range ups {
		read[u.Node] = u
	}
	out := beats[:0]
	for _, b := range beats {
		if c, ok := cursors[b.Node]; ok && c == b.Cursor {
			out = append(out, b)
		} else if u, ok := read[b.Node]; ok { // gone between the two reads: left out
			out = append(out, u)
		}
	}
	return out, nil
}

const beatsSQL = `select node, region, published, epoch, seq from node_heartbeat order by node`

// heartbeats reads every node's heartbeat, as updates without news.
func heartbeats(ctx context.Context, q *pgxpool.Pool) ([]pools.HealthUpdate, error) {
	rows, err := q.Query(ctx, beatsSQL)
	if err != nil {
		return nil, mapError(err)
	}
	defer rows.Close()
	out := []pools.HealthUpdate{}
	for rows.Next() {
		var u pools.HealthUpdate
		if err := rows.Scan(&u.Node, &u.Region, &u.Published, &u.Cursor.Epoch, &u.Cursor.Seq); err != nil {
			return nil, mapError(err)
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, mapError(err)
	}
	return out, nil
}

// healthSince runs sinceSQL for the nodes named in only (nil: every node).
func healthSince(ctx context.Context, q *pgxpool.Pool, cursors map[string]pools.HealthCursor, only []string) ([]pools.HealthUpdate, error) {
	var nodes []string
	var epochs, seqs []int64
	for n, c := range cursors {
		nodes, epochs, seqs = append(nodes, n), append(epochs, c.Epoch), append(seqs, c.Seq)
	}
	rows, err := q.Query(ctx, sinceSQL, nodes, epochs, seqs, only)
	if err != nil {
		return nil, mapError(err)
	}
	defer rows.Close()
	out := []pools.HealthUpdate{}
	in := interner{}
	// The last update's packed view, which the rows after it change.
	var m *merge
	done := func() {
		if m != nil {
			out[len(out)-1].Origins, m = m.result(), nil
		}
	}
	for rows.Next() {
		var u pools.HealthUpdate
		var view []byte
		var gone *bool
		var o originRow
		dest := append([]any{&u.Node, &u.Region, &u.Published, &u.Cursor.Epoch, &u.Cursor.Seq, &u.Full, &view, &gone}, o.dest()...)
		if err := rows.Scan(dest...); err != nil {
			return nil, mapError(err)
		}
		if len(out) == 0 || out[len(out)-1].Node != u.Node {
			done()
			out = append(out, u)
		}
		last := &out[len(out)-1]
		if view != nil {
			states, err := unpack(view, last.Published, in)
			if err != nil {
				return nil, fmt.Errorf("health of node %s: %w", last.Node, err)
			}
			m = &merge{}
			m.start(states)
			continue
		}
		if o.pool == nil {
			continue // a heartbeat without news
		}
		k := pools.OriginKey{Pool: *o.pool, Origin: *o.origin}
		var st pools.OriginState
		if !*gone {
			if st, err = o.state(last.Published); err != nil {
				return nil, err
			}
		}
		switch {
		case m != nil:
			m.apply(k, st, *gone)
		case *gone:
			last.Removed = append(last.Removed, k)
		default:
			last.Origins = append(last.Origins, st)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, mapError(err)
	}
	done()
	return out, nil
}

// HealthViews returns every node's view, ordered by node name: each
// node's whole view as a reader without cursors reads it.
func (s *Store) HealthViews(ctx context.Context, pool string) ([]pools.NodeHealth, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	ups, err := healthSince(ctx, s.pool, nil, nil)
	if err != nil {
		return nil, err
	}
	views := make([]pools.NodeHealth, 0, len(ups))
	for _, u := range ups {
		v := pools.NodeHealth{Node: u.Node, Region: u.Region, Published: u.Published, Origins: []pools.OriginState{}}
		for _, st := range u.Origins {
			if pool == "" || st.Pool == pool {
				v.Origins = append(v.Origins, st)
			}
		}
		slices.SortFunc(v.Origins, func(a, b pools.OriginState) int {
			return cmp.Or(cmp.Compare(a.Pool, b.Pool), cmp.Compare(a.Origin, b.Origin))
		})
		views = append(views, v)
	}
	return views, nil
}
