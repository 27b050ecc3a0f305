/* pgcost */
-- pg_stat_statements 1.9 to 1.12 (PostgreSQL 14 to 18): `toplevel` and `total_exec_time`.
-- Rows hidden for lack of pg_read_all_stats have a NULL queryid; their counters are still
-- visible and are summed by the caller.
-- $2 (showtext): false skips the query texts, which are then NULL (see statement_texts.sql).
SELECT userid::oid AS userid, queryid, toplevel, query, calls, rows,
       total_exec_time AS exec_time_ms, shared_blks_hit, shared_blks_read
FROM pg_stat_statements($2)
WHERE dbid = $1 AND (query IS NULL OR query NOT LIKE '/* pgcost */%')
