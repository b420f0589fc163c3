-- The DNS server cookie secret (RFC 9018) every node shares: one row, the
-- current secret and the one before the last rotation, still accepted.
-- "if not exists": migration numbers were handed out before the migrations
-- landed, so a database may meet this file again at another position.
create table if not exists glb_cookie_secret (
    singleton boolean primary key default true check (singleton),
    current bytea not null check (length(current) = 16),
    previous bytea check (previous is null or length(previous) = 16),
    rotated_on timestamptz not null
);
