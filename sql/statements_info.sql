/* pgcost */
-- pg_stat_statements_info, extension 1.9 and later.
SELECT dealloc, stats_reset::text AS stats_reset FROM pg_stat_statements_info
