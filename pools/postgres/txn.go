package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/glb-dns/glb/pools"
)

// txn is pools.Tx over a pgx transaction. Parameters are cast to base
// types in SQL because the columns use domains pgx has no codec for.
type txn struct {
	ctx context.Context
	tx  pgx.Tx
}

var _ pools.Tx = (*txn)(nil)

func (t *txn) BumpRevision() (int64, error) {
	var rev int64
	err := t.tx.QueryRow(t.ctx, "update glb_revision set revision = revision + 1 returning revision").Scan(&rev)
	if err != nil {
		return 0, err
	}
	// Delivered on commit only, so watchers never see a rolled-back write.
	_, err = t.tx.Exec(t.ctx, "select pg_notify('"+ConfigChannel+"', $1::text)", fmt.Sprint(rev))
	return rev, err
}

func (t *txn) Get(k pools.Kind, id string) (pools.Object, error) {
	tbl, err := table(k)
	if err != nil {
		return nil, err
	}
	var doc []byte
	err = t.tx.QueryRow(t.ctx, "select doc from "+tbl+" where id = $1::text", id).Scan(&doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%s %q: %w", k.Singular(), id, pools.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	o, err := decode(k, doc)
	if err != nil {
		return nil, err
	}
	if z, ok := o.(*pools.Zone); ok {
		if err := attachRecords(t.ctx, t.tx, map[string]*pools.Zone{z.ID: z}); err != nil {
			return nil, err
		}
	}
	return o, nil
}

func (t *txn) Exists(k pools.Kind, id string) (bool, error) {
	tbl, err := table(k)
	if err != nil {
		return false, err
	}
	var ok bool
	err = t.tx.QueryRow(t.ctx, "select exists (select 1 from "+tbl+" where id = $1::text)", id).Scan(&ok)
	return ok, err
}

// mustExist is ErrNotFound, naming what and id, when table has no row id:
// the check that reads and writes of what a row owns start with, so that
// an unknown owner is not taken for one that owns nothing.
func mustExist(ctx context.Context, tx pgx.Tx, table, what, id string) error {
	var ok bool
	if err := tx.QueryRow(ctx, "select exists (select 1 from "+table+" where id = $1::text)", id).Scan(&ok); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s %q: %w", what, id, pools.ErrNotFound)
	}
	return nil
}

func (t *txn) Owner(k pools.Kind, key string) (string, bool, error) {
	var q string
	switch k {
	case pools.KindZone, pools.KindLoadBalancer:
		q = "select id from " + string(k) + " where name = $1::text"
	case pools.KindNetwork:
		if _, err := netip.ParsePrefix(key); err != nil {
			return "", false, nil // validation reports the prefix itself
		}
		q = "select id from networks where cidr = $1::cidr"
	default:
		return "", false, nil
	}
	var id string
	err := t.tx.QueryRow(t.ctx, q, key).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	return id, err == nil, err
}

func (t *txn) Referrers(k pools.Kind, id string) ([]pools.Referrer, error) {
	var q string
	switch k {
	case pools.KindZone:
		q = "select 'load_balancer', id, name from load_balancers where zone_id = $1::text"
	case pools.KindPool:
		q = `select distinct 'load_balancer', l.id, l.name from load_balancer_pools r
			join load_balancers l on l.id = r.lb_id where r.pool_id = $1::text`
	case pools.KindMonitor:
		// A group's monitors live in the document only: writes are
		// serialised by the revision row, so this read is the check.
		q = `select 'pool', id, name from pools where monitor_id = $1::text
			or doc->'monitors' @> jsonb_build_array(jsonb_build_object('monitor', $1::text))`
	default:
		return nil, nil
	}
	rows, err := t.tx.Query(t.ctx, q, id)
	if err != nil {
		return nil, err
	}
	refs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (pools.Referrer, error) {
		var ref pools.Referrer
		err := r.Scan(&ref.Kind, &ref.ID, &ref.Name)
		return ref, err
	})
	if err != nil {
		return nil, err
	}
	pools.SortReferrers(refs)
	return refs, nil
}

// column is one constrained column and the value it gets.
type column struct {
	name, cast string
	value      any
}

func (t *txn) upsert(tbl string, m *pools.Meta, doc []byte, cols ...column) error {
	cols = append([]column{{"id", "text", m.ID}}, cols...)
	cols = append(cols,
		column{"revision", "int8", m.Revision},
		column{"created_on", "timestamptz", m.CreatedOn},
		column{"modified_on", "timestamptz", m.ModifiedOn},
		column{"doc", "jsonb", doc})
	names := make([]string, len(cols))
	params := make([]string, len(cols))
	sets := make([]string, 0, len(cols))
	values := make([]any, len(cols))
	for i, c := range cols {
		names[i] = c.name
		params[i] = fmt.Sprintf("$%d::%s", i+1, c.cast)
		values[i] = c.value
		if c.name != "id" {
			sets = append(sets, c.name+" = excluded."+c.name)
		}
	}
	q := "insert into " + tbl + " (" + strings.Join(names, ", ") + ") values (" + strings.Join(params, ", ") +
		") on conflict (id) do update set " + strings.Join(sets, ", ")
	_, err := t.tx.Exec(t.ctx, q, values...)
	return err
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (t *txn) Put(o, old pools.Object) error {
	doc, err := json.Marshal(o)
	if err != nil {
		return err
	}
	m := o.ObjectMeta()
	switch v := o.(type) {
	case *pools.Zone:
		oz, _ := old.(*pools.Zone)
		return t.putZone(v, oz)
	case *pools.Monitor:
		return t.upsert("monitors", m, doc,
			column{"type", "text", string(v.Type)},
			column{"port", "int4", v.Port},
			column{"timeout", "int4", v.Timeout},
			column{"interval", "int4", v.Interval},
			column{"retries", "int4", v.Retries},
			column{"consecutive_up", "int4", v.ConsecutiveUp},
			column{"consecutive_down", "int4", v.ConsecutiveDown})
	case *pools.Pool:
		regions := v.CheckRegions
		if regions == nil {
			regions = []string{}
		}
		err := t.upsert("pools", m, doc,
			column{"name", "text", v.Name},
			column{"enabled", "bool", v.Enabled},
			column{"minimum_origins", "int4", v.MinimumOrigins},
			column{"monitor_id", "text", nullable(v.Monitor)},
			column{"check_regions", "text[]", regions},
			column{"latitude", "float8", v.Latitude},
			column{"longitude", "float8", v.Longitude},
			column{"origin_steering", "text", string(v.OriginSteering.Policy)})
		if err != nil {
			return err
		}
		return t.putOrigins(v)
	case *pools.LoadBalancer:
		err := t.upsert("load_balancers", m, doc,
			column{"zone_id", "text", v.Zone},
			column{"name", "text", v.Name},
			column{"enabled", "bool", v.Enabled},
			column{"ttl", "int4", int64(v.TTL)},
			column{"steering_policy", "text", string(v.SteeringPolicy)},
			column{"default_weight", "float8", v.RandomSteering.DefaultWeight},
			column{"prefer_ecs", "text", string(v.LocationStrategy.PreferECS)},
			column{"spillover", "text", string(v.ZonalAffinity.Spillover)},
			column{"spillover_ratio", "float8", v.ZonalAffinity.SpilloverRatio},
			column{"answers", "int4", v.Answers})
		if err != nil {
			return err
		}
		return t.putPoolRefs(v)
	case *pools.Network:
		return t.upsert("networks", m, doc,
			column{"cidr", "cidr", v.CIDR},
			column{"zone", "text", v.Zone},
			column{"region", "text", v.Region},
			column{"country", "text", v.Country},
			column{"latitude", "float8", v.Latitude},
			column{"longitude", "float8", v.Longitude})
	case *pools.Shift:
		return t.upsert("shifts", m, doc,
			column{"starts_at", "timestamptz", v.StartsAt},
			column{"expires_at", "timestamptz", v.ExpiresAt},
			column{"ended_at", "timestamptz", v.EndedAt})
	case *pools.Rollout:
		return t.upsert("rollouts", m, doc,
			column{"pool_id", "text", nullable(v.Pool)},
			column{"load_balancer_id", "text", nullable(v.LoadBalancer)},
			column{"state", "text", v.State},
			column{"starts_at", "timestamptz", v.StartsAt})
	}
	return fmt.Errorf("put: unknown kind %q", o.Kind())
}

// putOrigins replaces a pool's origin rows in one statement.
func (t *txn) putOrigins(p *pools.Pool) error {
	if _, err := t.tx.Exec(t.ctx, "delete from origins where pool_id = $1::text", p.ID); err != nil {
		return err
	}
	n := len(p.Origins)
	pos, names, addrs, enabled, weights, zones := make([]int32, n), make([]string, n), make([]string, n), make([]bool, n), make([]float64, n), make([]string, n)
	for i, o := range p.Origins {
		pos[i], names[i], addrs[i], enabled[i], weights[i], zones[i] = int32(i), o.Name, o.Address, o.Enabled, o.Weight, o.Zone
	}
	_, err := t.tx.Exec(t.ctx, `insert into origins (pool_id, position, name, address, enabled, weight, zone)
		select $1::text, * from unnest($2::int4[], $3::text[], $4::text[], $5::bool[], $6::float8[], $7::text[])`,
		p.ID, pos, names, addrs, enabled, weights, zones)
	return err
}

// putPoolRefs replaces a load balancer's pool references in one statement.
func (t *txn) putPoolRefs(l *pools.LoadBalancer) error {
	if _, err := t.tx.Exec(t.ctx, "delete from load_balancer_pools where lb_id = $1::text", l.ID); err != nil {
		return err
	}
	refs := l.PoolRefs()
	n := len(refs)
	roles, keys, pos, ids, weights := make([]string, n), make([]string, n), make([]int32, n), make([]string, n), make([]*float64, n)
	for i, r := range refs {
		roles[i], keys[i], pos[i], ids[i] = string(r.Role), r.Key, int32(r.Position), r.Pool
		if r.Role == pools.RoleRandom {
			w := r.Weight
			weights[i] = &w
		}
	}
	_, err := t.tx.Exec(t.ctx, `insert into load_balancer_pools (lb_id, role, key, position, pool_id, weight)
		select $1::text, * from unnest($2::text[], $3::text[], $4::int4[], $5::text[], $6::float8[])`,
		l.ID, roles, keys, pos, ids, weights)
	return err
}

func (t *txn) Remove(old pools.Object) error {
	tbl, err := table(old.Kind())
	if err != nil {
		return err
	}
	_, err = t.tx.Exec(t.ctx, "delete from "+tbl+" where id = $1::text", old.ObjectMeta().ID)
	return err
}
