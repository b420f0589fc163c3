-- Staged rollouts of a load balancer's default pool order: a rollout
-- targets a pool (its weights) or a load balancer (its order), one of
-- the two. "if not exists": migration numbers were handed out before the
-- migrations landed, so a database may meet this file again.
alter table rollouts alter column pool_id drop not null;
alter table rollouts add column if not exists load_balancer_id text;
alter table rollouts drop constraint if exists rollouts_one_target;
alter table rollouts add constraint rollouts_one_target
    check ((pool_id is null) <> (load_balancer_id is null));
-- At most one unended rollout per load balancer, whoever writes.
create unique index if not exists rollouts_one_per_load_balancer on rollouts (load_balancer_id)
    where state in ('running', 'paused');
