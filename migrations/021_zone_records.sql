-- A zone's static records, one row each, so that a DNS UPDATE of a zone
-- of 10,000 records writes the rows it changes rather than the zone's
-- whole document. seq keeps the order records were written in. The
-- records move out of the zones' documents, all of them, in their order.
create table if not exists zone_records (
    zone_id glb_id not null references zones (id) on delete cascade,
    seq bigint not null,
    name text not null,
    type text not null,
    content text not null,
    ttl bigint not null default 0 check (ttl between 0 and 4294967295),
    owner text not null default '',
    primary key (zone_id, seq)
);

insert into zone_records (zone_id, seq, name, type, content, ttl, owner)
select z.id, r.ord, r.rec->>'name', r.rec->>'type', r.rec->>'content',
       coalesce((r.rec->>'ttl')::bigint, 0), coalesce(r.rec->>'owner', '')
from zones z, jsonb_array_elements(case when jsonb_typeof(z.doc->'records') = 'array' then z.doc->'records' else '[]'::jsonb end)
     with ordinality as r(rec, ord);

update zones set doc = doc - 'records';
