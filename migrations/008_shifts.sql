-- Shifts: traffic moved away from a pool, an origin or a zone for a while.
-- A shift is in force in [starts_at, least(expires_at, ended_at)); every
-- node decides that from its own clock, so nothing is written at expiry.
create table if not exists shifts (
    id glb_id primary key,
    starts_at timestamptz not null,
    expires_at timestamptz not null check (expires_at > starts_at and expires_at <= starts_at + interval '7 days'),
    ended_at timestamptz,
    revision bigint not null check (revision >= 1),
    created_on timestamptz not null,
    modified_on timestamptz not null,
    doc jsonb not null
);
create index if not exists shifts_order on shifts (created_on, id);

create or replace trigger shifts_changes after insert or update or delete on shifts
    for each row execute function glb_log_change();

-- Shifts add two audit actions: ended early, and reached the expiry.
alter table audit_log drop constraint if exists audit_log_action_check;
alter table audit_log add constraint audit_log_action_check
    check (action in ('create', 'update', 'delete', 'health', 'end', 'expire'));

-- A shift's expiry is audited by the first node that sees it pass; the
-- others' inserts meet this index and do nothing.
create unique index if not exists audit_log_shift_expire on audit_log (object_id)
    where kind = 'shifts' and action = 'expire';
