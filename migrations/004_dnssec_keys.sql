-- DNSSEC keys: one row per signed zone holding its key list (private parts
-- included; the API shows only public parts). A zone's keys go with it.
-- "if not exists": migration numbers were handed out before the migrations
-- landed, so a database may meet this file again at another position.
create table if not exists dnssec_keys (
    zone_id glb_id primary key references zones (id) on delete cascade,
    keys jsonb not null check (jsonb_typeof(keys) = 'array')
);
