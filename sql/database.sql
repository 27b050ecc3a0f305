/* pgcost */
-- The target database's row of pg_stat_database ($1), PostgreSQL 12 on. A column is read
-- under its own name, the name of its counter in src/cost/report/model/counters.rs
-- (`DatabaseCounters`). The columns every version has are listed here; those a version lacks
-- come from its database_columns_v*.sql, put in place of the braced name below.
SELECT xact_commit, xact_rollback, tup_returned, tup_fetched, tup_inserted,
       tup_updated, tup_deleted, blks_hit, blks_read,
       stats_reset::text AS stats_reset,
       {version_columns}
FROM pg_stat_database
WHERE datid = $1
