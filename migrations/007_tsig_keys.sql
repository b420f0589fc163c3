-- TSIG keys (RFC 8945) with which DNS UPDATE messages are signed, and the
-- names and types each may change. The secret itself is kept: checking an
-- HMAC needs it. "if not exists": migration numbers may be handed out
-- before the migrations land.
create table if not exists tsig_keys (
    name text primary key check (name ~ '^[a-z0-9_-]+(\.[a-z0-9_-]+)*$' and length(name) <= 253),
    algorithm text not null check (algorithm in ('hmac-sha256', 'hmac-sha512')),
    secret text not null check (secret <> ''),
    grants jsonb not null,
    created_on timestamptz not null
);
