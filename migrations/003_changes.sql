-- The change log: which objects each revision wrote or deleted, so that a
-- node applies a change instead of rereading the whole configuration.
-- Triggers fill it inside the writing transaction, whoever writes.
-- Revisions at or below the horizon are no longer covered (pruned, or
-- written before this migration): a reader that far behind reloads all.
-- "if not exists" and "or replace": migration numbers were handed out
-- before the migrations landed, so a database may meet this file again.
create table if not exists config_changes (
    revision bigint not null,
    kind text not null,
    id text not null,
    primary key (revision, kind, id)
);

create table if not exists config_changes_horizon (
    singleton boolean primary key default true check (singleton),
    revision bigint not null check (revision >= 0)
);
insert into config_changes_horizon (singleton, revision) select true, revision from glb_revision
    on conflict do nothing;

-- Keeps pools.ChangeLogRevisions (10000) revisions, pruning every 100.
create or replace function glb_log_change() returns trigger language plpgsql as $$
declare
    rev bigint;
begin
    select revision into rev from glb_revision;
    insert into config_changes (revision, kind, id)
        values (rev, tg_table_name, case when tg_op = 'DELETE' then old.id else new.id end)
        on conflict do nothing;
    if rev % 100 = 0 and rev > 10000 then
        delete from config_changes where revision <= rev - 10000;
        update config_changes_horizon set revision = greatest(revision, rev - 10000);
    end if;
    return null;
end
$$;

create or replace trigger zones_changes after insert or update or delete on zones
    for each row execute function glb_log_change();
create or replace trigger monitors_changes after insert or update or delete on monitors
    for each row execute function glb_log_change();
create or replace trigger pools_changes after insert or update or delete on pools
    for each row execute function glb_log_change();
create or replace trigger load_balancers_changes after insert or update or delete on load_balancers
    for each row execute function glb_log_change();
create or replace trigger networks_changes after insert or update or delete on networks
    for each row execute function glb_log_change();
