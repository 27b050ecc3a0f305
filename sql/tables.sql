/* pgcost */
-- pg_stat_user_tables of the connected database, with each table's size in pages.
SELECT s.schemaname || '.' || s.relname AS name,
       s.seq_scan, s.seq_tup_read,
       coalesce(s.idx_scan, 0) AS idx_scan, coalesce(s.idx_tup_fetch, 0) AS idx_tup_fetch,
       -- Index entries read, index-only scans included (they fetch no heap row).
       coalesce((SELECT sum(i.idx_tup_read) FROM pg_stat_user_indexes i WHERE i.relid = s.relid),
                0)::bigint AS idx_tup_read,
       s.n_tup_ins, s.n_tup_upd, s.n_tup_del,
       c.relpages::bigint AS relpages, s.n_live_tup
FROM pg_stat_user_tables s
JOIN pg_class c ON c.oid = s.relid
