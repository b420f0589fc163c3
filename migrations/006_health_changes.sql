-- Health as changes: one heartbeat row per node, written on every
-- publication, and one row per (node, origin) written only when the
-- node's state of the origin changes. A hundred thousand origins on ten
-- nodes then cost ten small updates a second, not ten whole views.
-- "if not exists": migration numbers were handed out before the
-- migrations landed, so a database may meet this file again.
--
-- node_health (001) is no longer written; it stays for nodes of an older
-- version still running during an upgrade.

-- epoch moves with each full publication (a node's start): readers start
-- the node over. seq moves with each publication that writes origin rows:
-- a reader at seq s reads the rows with seq > s. Both only move under the
-- row lock of the node's heartbeat, so a node's rows commit in seq order.
create table if not exists node_heartbeat (
    node text primary key check (node <> ''),
    region text not null,
    published timestamptz not null,
    epoch bigint not null check (epoch > 0),
    seq bigint not null check (seq >= 0)
);

-- gone: the node withdrew the origin (no longer checked, or not checked
-- for too long); kept so that a reader behind learns of it, dropped at the
-- node's next full publication.
create table if not exists node_origin_health (
    node text not null references node_heartbeat (node) on delete cascade,
    pool text not null,
    origin text not null,
    seq bigint not null,
    gone boolean not null,
    healthy boolean not null,
    reason text not null,
    rtt_ns bigint not null check (rtt_ns >= 0),
    primary key (node, pool, origin)
);
create index if not exists node_origin_health_seq on node_origin_health (node, seq);
