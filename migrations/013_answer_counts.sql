-- Answer counts for the analytics API: each node writes its own
-- 10-second rows (node set, step 10), which are merged across nodes into
-- minute rows (node '', step 60) after an hour and deleted after the
-- configured retention. bucket is the bucket's start in Unix seconds.
-- "if not exists": migration numbers were handed out before the
-- migrations landed, so a database may meet this file again.
create table if not exists glb_answer_counts (
    load_balancer text not null,
    step smallint not null check (step in (10, 60)),
    bucket bigint not null check (bucket % step = 0),
    node text not null,
    pool text not null,
    origin text not null,
    region text not null,
    country text not null,
    rcode text not null,
    answers bigint not null check (answers >= 0),
    primary key (load_balancer, step, bucket, node, pool, origin, region, country, rcode)
);
-- Compaction and retention find old buckets without a load balancer.
create index if not exists glb_answer_counts_bucket on glb_answer_counts (step, bucket);

-- The sample of recent queries the traffic preview replays: per node,
-- minute (Unix seconds), load balancer (the 64-bit hash of its id),
-- client subnet and query type, how many were sampled. Kept an hour.
create table if not exists glb_query_samples (
    node text not null,
    minute bigint not null check (minute % 60 = 0),
    lb_key bigint not null,
    subnet cidr not null,
    qtype integer not null,
    queries bigint not null check (queries > 0),
    primary key (lb_key, minute, node, subnet, qtype)
);
create index if not exists glb_query_samples_minute on glb_query_samples (minute);
