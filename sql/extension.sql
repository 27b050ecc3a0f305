/* pgcost */
-- The installed pg_stat_statements version in the connected database, if any.
SELECT extversion FROM pg_extension WHERE extname = 'pg_stat_statements'
