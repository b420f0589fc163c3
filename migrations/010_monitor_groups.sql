-- Monitor groups: a node's state of an origin of a pool with several
-- monitors carries what each monitor sees (a JSON array of
-- {monitor, healthy, reason, rtt}), so that every node's page can show
-- each monitor's view; null for a pool with one monitor. The group itself
-- lives in the pool's document: references to its monitors are checked by
-- the write that changes a pool or deletes a monitor.
-- "if not exists": migration numbers were handed out before the
-- migrations landed, so a database may meet this file again.
alter table node_origin_health add column if not exists monitors jsonb;
