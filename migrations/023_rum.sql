-- Real user measurements (issue 44): the measured_latency policy, and
-- the two tables the nodes merge RUM reports through. "if not exists"
-- and "drop ... if exists": a database may meet this file again at
-- another position.
alter table load_balancers drop constraint if exists load_balancers_steering_policy_check;
alter table load_balancers add constraint load_balancers_steering_policy_check
    check (steering_policy in ('', 'off', 'geo', 'proximity', 'dynamic_latency', 'measured_latency', 'random'));

-- What one node took from reports in one minute (Unix seconds) for one
-- client network (a /24 or /48: never an address) and pool: a histogram
-- of the times measured (pools.RUMHistogramBuckets buckets). Readers sum
-- over nodes and the window; rows past it are pruned.
create table if not exists glb_rum_samples (
    node text not null,
    minute bigint not null check (minute % 60 = 0),
    network cidr not null,
    pool text not null,
    counts integer[] not null,
    primary key (minute, node, network, pool)
);

-- A beacon's unique name as the two sides saw it: the resolver network
-- that looked it up over DNS, the client network whose report carried it
-- (either may come first, to any node). seen is Unix seconds.
create table if not exists glb_rum_tokens (
    token text primary key check (token ~ '^[a-z0-9]{8,40}$'),
    resolver cidr,
    network cidr,
    seen bigint not null
);
create index if not exists glb_rum_tokens_seen on glb_rum_tokens (seen);
