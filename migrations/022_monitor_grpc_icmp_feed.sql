-- grpc, icmp and feed monitors (issue 42); their fields live in the
-- document, as the other types' do.
alter table monitors drop constraint if exists monitors_type_check;
alter table monitors add constraint monitors_type_check
    check (type in ('http', 'https', 'tcp', 'udp', 'dns', 'tls', 'smtp', 'grpc', 'icmp', 'feed'));
