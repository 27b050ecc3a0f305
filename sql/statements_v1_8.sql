/* pgcost */
-- pg_stat_statements 1.8 (PostgreSQL 13): `total_exec_time` and the WAL counters, no `toplevel`.
-- $2 (showtext): false skips the query texts, which are then NULL (see statement_texts.sql).
SELECT userid::oid AS userid, queryid, NULL::bool AS toplevel, query, calls, rows,
       total_exec_time AS exec_time_ms,
       -- Plan time (PG 13+) counts only while pg_stat_statements.track_planning is on:
       -- NULL when it is off, so that 0 is never read as "no planning".
       CASE WHEN current_setting('pg_stat_statements.track_planning', true) = 'on'
            THEN total_plan_time END AS plan_time_ms,
       shared_blks_hit, shared_blks_read,
       shared_blks_dirtied, shared_blks_written, temp_blks_written, temp_blks_read,
       wal_records, wal_fpi, wal_bytes::bigint AS wal_bytes
FROM pg_stat_statements($2)
WHERE dbid = $1 AND (query IS NULL OR query NOT LIKE '/* pgcost */%')
