-- API tokens and the audit log. "if not exists" everywhere: migration
-- numbers were handed out before the migrations landed, so a database may
-- meet this file again at another position.

-- Named API tokens. Only the SHA-256 of a secret is kept.
create table if not exists api_tokens (
    name text primary key check (name ~ '^[A-Za-z0-9_-]{1,64}$'),
    hash bytea not null unique check (length(hash) = 32),
    scopes text[] not null check (cardinality(scopes) > 0 and scopes <@ array['read', 'write', 'admin']),
    created_on timestamptz not null,
    expires_on timestamptz,
    last_used_on timestamptz
);

-- Every accepted write and every agreed health transition, written in the
-- transaction of the write it records.
create table if not exists audit_log (
    id bigserial primary key,
    revision bigint not null check (revision >= 0),
    at timestamptz not null,
    actor text not null,
    method text not null,
    action text not null check (action in ('create', 'update', 'delete', 'health')),
    kind text not null,
    object_id text not null,
    before jsonb,
    after jsonb
);
create index if not exists audit_log_at on audit_log (at);
create index if not exists audit_log_object on audit_log (kind, object_id, id);
create index if not exists audit_log_actor on audit_log (actor, id);

-- The last agreed health state recorded per origin, so that each node may
-- report what it agreed on and every transition is still recorded once.
create table if not exists audit_health_state (
    pool text not null,
    origin text not null,
    healthy boolean not null,
    primary key (pool, origin)
);
