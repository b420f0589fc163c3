-- Health and load fed in (issue 42): the latest word of each origin under
-- each feed monitor of its pool's group. A word counts until expires_at,
-- which every node compares with its own clock: no node writes that a
-- word expired. Words are pruned some time after they expire. Writes
-- NOTIFY glb_feeds. "if not exists" and "drop ... if exists": a database
-- may meet this file again at another position.
create table if not exists glb_feeds (
    pool text not null,
    origin text not null,
    monitor text not null,
    up boolean not null,
    reason text not null default '',
    load double precision check (load is null or (load >= 0 and load <= 1)),
    source text not null check (source in ('api', 'alertmanager')),
    received_at timestamptz not null,
    expires_at timestamptz not null,
    -- Alertmanager: the alerts firing for the origin (fingerprint,
    -- summary), merged webhook after webhook; null otherwise.
    alerts jsonb,
    primary key (pool, origin, monitor)
);
create index if not exists glb_feeds_expires on glb_feeds (expires_at);

-- Tokens gain the feed scope: feeding health and load in, nothing else.
alter table api_tokens drop constraint if exists api_tokens_scopes_check;
alter table api_tokens add constraint api_tokens_scopes_check
    check (cardinality(scopes) > 0 and scopes <@ array['read', 'write', 'integrations', 'admin', 'feed']);
