-- The fleet: each node's last report (its status, as JSON), when the store
-- saw it, since when it has lagged the store's revision, and the drain an
-- operator asked of it. A node writes its row every second; readers judge
-- stale and gone on their own clock. "if not exists": a database may meet
-- this file again at another position.
create table if not exists glb_nodes (
    name text primary key check (name <> ''),
    doc jsonb not null
);

-- Drains are audited (kind nodes, revision 0: not configuration).
alter table audit_log drop constraint if exists audit_log_action_check;
alter table audit_log add constraint audit_log_action_check
    check (action in ('create', 'update', 'delete', 'health', 'end', 'expire', 'start', 'drain', 'undrain'));
