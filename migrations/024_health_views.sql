-- Each node's whole health view, packed: one row per node holding its
-- live origin states as of seq (of epoch), encoded and compressed by the
-- store (pools/postgres/pack.go). A reader without a cursor for the node
-- (its first read, or the node restarted) reads this row and the
-- node_origin_health rows after seq, not every origin's row: a node that
-- starts reads N rows, not N × M, and a fleet started at once asks N²,
-- not N² × M (41 million rows at 64 nodes × 10,000 origins). Written at
-- each full publication, and again when the rows after it reach an eighth
-- of it (at least 256). A node without a row here, or with one of an
-- older epoch, is read row by row. "if not exists": a database may meet
-- this file again at another position.
create table if not exists node_health_view (
    node text primary key references node_heartbeat (node) on delete cascade,
    epoch bigint not null,
    seq bigint not null,
    n integer not null check (n >= 0),
    packed bytea not null
);
-- Compressed already: stored out of line as it is.
alter table node_health_view alter column packed set storage external;
