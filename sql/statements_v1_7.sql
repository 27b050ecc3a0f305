/* pgcost */
-- pg_stat_statements up to 1.7 (PostgreSQL 12): `total_time`, no `toplevel`, no WAL counters.
-- $2 (showtext): false skips the query texts, which are then NULL (see statement_texts.sql).
SELECT userid::oid AS userid, queryid, NULL::bool AS toplevel, query, calls, rows,
       total_time AS exec_time_ms, NULL::float8 AS plan_time_ms,
       shared_blks_hit, shared_blks_read,
       shared_blks_dirtied, shared_blks_written, temp_blks_written, temp_blks_read,
       NULL::bigint AS wal_records, NULL::bigint AS wal_fpi, NULL::bigint AS wal_bytes
FROM pg_stat_statements($2)
WHERE dbid = $1 AND (query IS NULL OR query NOT LIKE '/* pgcost */%')
