/* pgcost */
-- Client backends connected to the target database right now.
SELECT count(*)::bigint FROM pg_stat_activity WHERE datid = $1 AND backend_type = 'client backend'
