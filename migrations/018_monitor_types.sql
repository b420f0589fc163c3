-- Monitors of types udp, dns and tls (issue 42): the rest of their
-- fields live in the document, as the http fields do.
alter table monitors drop constraint if exists monitors_type_check;
alter table monitors add constraint monitors_type_check
    check (type in ('http', 'https', 'tcp', 'udp', 'dns', 'tls'));
