-- The global safety rules (rules across every load balancer, beside each
-- load balancer's own): one row, the rules as a JSON document and the
-- configuration revision of their last write, which If-Match names.
-- "if not exists": migration numbers were handed out before the
-- migrations landed, so a database may meet this file again.
create table if not exists glb_safety_rules (
    singleton boolean primary key default true check (singleton),
    revision bigint not null check (revision >= 1),
    doc jsonb not null
);
