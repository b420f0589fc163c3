-- Notifications: subscriptions, and the outbox of events to deliver to
-- them. An event is written in the transaction of the change that causes
-- it (a write, a health tally step), with a stable id; its deliveries,
-- one per subscription that wants it, are claimed by one node at a time
-- (FOR UPDATE SKIP LOCKED, then a lease that a dead node's claims outlive
-- only until it runs out). "if not exists": migration numbers may be
-- handed out before the migrations land.

-- secret: the signing secret (standard) or routing key (pagerduty); doc is
-- the subscription without it.
create table if not exists notify_subscriptions (
    id text primary key check (id <> ''),
    secret text not null,
    created_on timestamptz not null,
    doc jsonb not null
);

-- seq orders the events; the writers take a transaction-scoped advisory
-- lock before inserting, so that events commit in seq order and a reader
-- never sees seq n+1 before n.
create table if not exists notify_events (
    seq bigserial primary key,
    id text not null unique,
    type text not null,
    at timestamptz not null,
    body jsonb not null
);

create table if not exists notify_deliveries (
    subscription text not null references notify_subscriptions (id) on delete cascade,
    seq bigint not null references notify_events (seq) on delete cascade,
    status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
    attempts int not null default 0 check (attempts >= 0),
    next_at timestamptz not null,
    last_at timestamptz,
    last_code int not null default 0,
    last_error text not null default '',
    delivered_at timestamptz,
    lease_owner text,
    lease_until timestamptz,
    primary key (subscription, seq)
);
create index if not exists notify_deliveries_pending on notify_deliveries (subscription, seq) where status = 'pending';

-- The last recorded state of what events report on (a pool's health, a
-- load balancer's answering pool, ...), so that each node may report what
-- it observed and every transition is still recorded once.
create table if not exists notify_state (
    key text primary key,
    state text not null,
    at timestamptz not null
);
