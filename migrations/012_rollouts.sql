-- Staged rollouts: a pool's weights moved to new values in steps. Every
-- node works out the step in force from its own clock and the stored
-- row, so nothing is written when a step begins; only events (pause,
-- resume, abort, a guard's roll back, completion) write.
-- "if not exists" and "or replace": migration numbers were handed out
-- before the migrations landed, so a database may meet this file again.
create table if not exists rollouts (
    id glb_id primary key,
    pool_id text not null,
    state text not null check (state in ('running', 'paused', 'completed', 'rolled_back', 'aborted')),
    starts_at timestamptz not null,
    revision bigint not null check (revision >= 1),
    created_on timestamptz not null,
    modified_on timestamptz not null,
    doc jsonb not null
);
create index if not exists rollouts_order on rollouts (created_on, id);
-- At most one unended rollout per pool, whoever writes.
create unique index if not exists rollouts_one_per_pool on rollouts (pool_id)
    where state in ('running', 'paused');

create or replace trigger rollouts_changes after insert or update or delete on rollouts
    for each row execute function glb_log_change();

-- A step begins by the clock and is audited by the first node that sees
-- it; the others' inserts meet this index and do nothing.
create unique index if not exists audit_log_rollout_step on audit_log (object_id, (after->>'current_step'))
    where kind = 'rollouts' and actor = 'clock' and action = 'update' and before is null;
