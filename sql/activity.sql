/* pgcost */
-- Backends connected to the target database, other than the one running this query and
-- pgcost's own table reader ($2, 0 when there is none), with the server's clock at the
-- read: one row with a NULL pid when there are none. The clock lets pgcost notice that
-- the server's wall clock stepped, which would make idle times look longer than they are.
-- The role and application name are visible even where the state is hidden: they tell
-- the app's backends from other traffic (--app-role).
SELECT c.now, a.pid, coalesce(a.backend_type, '') AS backend_type, coalesce(a.state, '') AS state,
       coalesce(c.now - extract(epoch FROM a.state_change)::float8, 0) AS idle_seconds,
       coalesce(a.usename::text, '') AS role, coalesce(a.application_name, '') AS application
FROM (SELECT extract(epoch FROM clock_timestamp())::float8 AS now) c
LEFT JOIN pg_stat_activity a
  ON a.datid = $1 AND a.pid <> pg_backend_pid() AND a.pid <> $2
