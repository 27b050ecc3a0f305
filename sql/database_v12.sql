/* pgcost */
-- pg_stat_database, PostgreSQL 12 and 13 (no `sessions`).
SELECT xact_commit, xact_rollback, tup_returned, tup_fetched, tup_inserted,
       tup_updated, tup_deleted, blks_hit, blks_read, NULL::bigint AS sessions,
       stats_reset::text AS stats_reset
FROM pg_stat_database
WHERE datid = $1
