/* pgcost */
-- One reading of pg_stat_statements in the target database ($1), any version from 1.7
-- (PostgreSQL 12) on. A column is read under its own name: the name of its counter in
-- src/cost/report/model/counters.rs (`WriteCounters`) and cost/snapshot.rs (`StatementStats`).
-- The columns every version has are listed here; those a version lacks or names otherwise
-- come from the version's statements_columns_v1_*.sql, put in place of the braced name below.
-- $2 (showtext): false skips the query texts, which are then NULL (see statement_texts.sql).
-- Rows hidden for lack of pg_read_all_stats have a NULL queryid; their counters are still
-- visible and are summed by the caller.
SELECT userid::oid AS userid, queryid, query, calls, rows,
       shared_blks_hit, shared_blks_read,
       shared_blks_dirtied, shared_blks_written, temp_blks_written, temp_blks_read,
       local_blks_dirtied,
       {version_columns}
FROM pg_stat_statements($2)
WHERE dbid = $1 AND (query IS NULL OR query NOT LIKE '/* pgcost */%')
