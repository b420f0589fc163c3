-- smtp monitors (issue 42).
alter table monitors drop constraint if exists monitors_type_check;
alter table monitors add constraint monitors_type_check
    check (type in ('http', 'https', 'tcp', 'udp', 'dns', 'tls', 'smtp'));
