-- A scheduled shift's start is audited by the clock, as its expiry is:
-- the first node that reaches the store records it, and the others'
-- inserts (every node retries until the store answers) meet the index
-- and do nothing.
alter table audit_log drop constraint if exists audit_log_action_check;
alter table audit_log add constraint audit_log_action_check
    check (action in ('create', 'update', 'delete', 'health', 'end', 'expire', 'start'));

create unique index if not exists audit_log_shift_start on audit_log (object_id)
    where kind = 'shifts' and action = 'start';
