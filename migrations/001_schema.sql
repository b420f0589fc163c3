-- glb's configuration schema. Each object keeps its whole JSON document in
-- "doc" (what the store reads back) beside real columns that carry the
-- constraints: foreign keys for every reference, CHECKs for the validation
-- rules, unique names. The store validates first and reports every field;
-- these constraints are the backstop for anything that writes here.

-- The global configuration revision: one row, bumped by every write in the
-- same transaction, which also serialises writers.
create table glb_revision (
    singleton boolean primary key default true check (singleton),
    revision bigint not null check (revision >= 0)
);
insert into glb_revision (singleton, revision) values (true, 0);

create domain glb_id as text check (value ~ '^[A-Za-z0-9_-]{1,64}$');
create domain glb_dns_name as text
    check (value <> '' and value = lower(value) and right(value, 1) <> '.' and length(value) <= 253);
create domain glb_unit as double precision check (value >= 0 and value <= 1);
create domain glb_region as text
    check (value in ('WNAM', 'ENAM', 'WEU', 'EEU', 'NSAM', 'SSAM', 'OC', 'ME', 'NAF', 'SAF', 'SAS', 'SEAS', 'NEAS'));
create domain glb_country as text check (value ~ '^[A-Z]{2}$');

create table zones (
    id glb_id primary key,
    name glb_dns_name not null unique,
    ttl bigint not null check (ttl between 0 and 4294967295),
    serial bigint not null check (serial between 0 and 4294967295),
    revision bigint not null check (revision >= 1),
    created_on timestamptz not null,
    modified_on timestamptz not null,
    doc jsonb not null
);
create index zones_order on zones (created_on, id);

create table monitors (
    id glb_id primary key,
    type text not null check (type in ('http', 'https', 'tcp')),
    port integer not null check (port between 0 and 65535),
    timeout integer not null check (timeout >= 1),
    interval integer not null check (interval >= 1),
    retries integer not null check (retries between 0 and 5),
    consecutive_up integer not null check (consecutive_up >= 0),
    consecutive_down integer not null check (consecutive_down >= 0),
    revision bigint not null check (revision >= 1),
    created_on timestamptz not null,
    modified_on timestamptz not null,
    doc jsonb not null
);
create index monitors_order on monitors (created_on, id);

create table pools (
    id glb_id primary key,
    name text not null check (btrim(name) <> ''),
    enabled boolean not null,
    minimum_origins integer not null check (minimum_origins >= 1),
    monitor_id glb_id references monitors (id),
    check_regions text[] not null
        check (check_regions <@ array['WNAM', 'ENAM', 'WEU', 'EEU', 'NSAM', 'SSAM', 'OC', 'ME', 'NAF', 'SAF', 'SAS', 'SEAS', 'NEAS']),
    latitude double precision check (latitude between -90 and 90),
    longitude double precision check (longitude between -180 and 180),
    origin_steering text not null check (origin_steering in ('random', 'hash')),
    revision bigint not null check (revision >= 1),
    created_on timestamptz not null,
    modified_on timestamptz not null,
    doc jsonb not null,
    check ((latitude is null) = (longitude is null))
);
create index pools_order on pools (created_on, id);
create index pools_monitor on pools (monitor_id);

create table origins (
    pool_id glb_id not null references pools (id) on delete cascade,
    position integer not null check (position between 0 and 63),
    name text not null check (btrim(name) <> ''),
    address text not null check (address <> ''),
    enabled boolean not null,
    weight glb_unit not null,
    zone text not null,
    primary key (pool_id, position),
    unique (pool_id, name)
);

create table load_balancers (
    id glb_id primary key,
    zone_id glb_id not null references zones (id),
    name glb_dns_name not null unique,
    enabled boolean not null,
    ttl integer not null check (ttl between 1 and 86400),
    steering_policy text not null
        check (steering_policy in ('', 'off', 'geo', 'proximity', 'dynamic_latency', 'random')),
    default_weight glb_unit not null,
    prefer_ecs text not null check (prefer_ecs in ('always', 'never', 'proximity', 'geo')),
    spillover text not null check (spillover in
        ('ZONAL_AFFINITY_DISABLED', 'ZONAL_AFFINITY_STAY_WITHIN_ZONE', 'ZONAL_AFFINITY_SPILL_CROSS_ZONE')),
    spillover_ratio glb_unit not null,
    answers integer not null check (answers between 0 and 64),
    revision bigint not null check (revision >= 1),
    created_on timestamptz not null,
    modified_on timestamptz not null,
    doc jsonb not null
);
create index load_balancers_order on load_balancers (created_on, id);
create index load_balancers_zone on load_balancers (zone_id);

-- Every reference from a load balancer to a pool, so that the foreign key
-- to pools is real whatever the role: default and fallback pools, region
-- and country lists (key is the code), random steering weights.
create table load_balancer_pools (
    lb_id glb_id not null references load_balancers (id) on delete cascade,
    role text not null check (role in ('default', 'fallback', 'region', 'country', 'random_weight')),
    key text not null,
    position integer not null check (position >= 0),
    pool_id glb_id not null references pools (id),
    weight glb_unit,
    primary key (lb_id, role, key, position),
    check ((role = 'random_weight') = (weight is not null)),
    check (case role
        when 'region' then key in ('WNAM', 'ENAM', 'WEU', 'EEU', 'NSAM', 'SSAM', 'OC', 'ME', 'NAF', 'SAF', 'SAS', 'SEAS', 'NEAS')
        when 'country' then key ~ '^[A-Z]{2}$'
        else key = '' end),
    check (role <> 'fallback' or position = 0)
);
create index load_balancer_pools_pool on load_balancer_pools (pool_id);
create unique index load_balancer_pools_one_fallback on load_balancer_pools (lb_id) where role = 'fallback';

create table networks (
    id glb_id primary key,
    cidr cidr not null unique,
    zone text not null,
    region text not null check (region = '' or region::glb_region = region),
    country text not null check (country = '' or country ~ '^[A-Z]{2}$'),
    latitude double precision check (latitude between -90 and 90),
    longitude double precision check (longitude between -180 and 180),
    revision bigint not null check (revision >= 1),
    created_on timestamptz not null,
    modified_on timestamptz not null,
    doc jsonb not null,
    check ((latitude is null) = (longitude is null))
);
create index networks_order on networks (created_on, id);

-- One health view per node, replaced on every publication.
create table node_health (
    node text primary key check (node <> ''),
    region text not null,
    published timestamptz not null,
    view jsonb not null
);
