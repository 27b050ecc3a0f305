/* pgcost */
-- Backends connected to the target database, other than the one running this query and
-- pgcost's own table reader ($2, 0 when there is none).
SELECT pid, coalesce(backend_type, '') AS backend_type, coalesce(state, '') AS state,
       coalesce(extract(epoch FROM clock_timestamp() - state_change), 0)::float8 AS idle_seconds
FROM pg_stat_activity
WHERE datid = $1 AND pid <> pg_backend_pid() AND pid <> $2
