-- Tokens gain the integrations scope (notification subscriptions, rollout
-- guards: whatever makes glbd send a request to a URL) and may be scoped
-- to zones. "if exists"/"if not exists": a database may meet this file
-- again at another position.
alter table api_tokens drop constraint if exists api_tokens_scopes_check;
alter table api_tokens add constraint api_tokens_scopes_check
    check (cardinality(scopes) > 0 and scopes <@ array['read', 'write', 'integrations', 'admin']);
alter table api_tokens add column if not exists zones text[] not null default '{}';
