-- prefer_ecs "auto", the default of new load balancers: the ECS subnet
-- locates the client whenever the steering uses the client's location.
-- Stored load balancers keep the value they have.
alter table load_balancers drop constraint if exists load_balancers_prefer_ecs_check;
alter table load_balancers add constraint load_balancers_prefer_ecs_check
    check (prefer_ecs in ('auto', 'always', 'never', 'proximity', 'geo'));
