/* pgcost */
-- The target database's ($1: its oid) client backends and the statement each runs or ran
-- last (idle backends keep their last one), for the tags in its comment (route, controller, file:line); pgcost's own table
-- reader ($2, 0 when none) left out. PG 14+: query_id is NULL unless compute_query_id is
-- on. query_start tells one execution from the next of the same backend. Read over the
-- admin connection, so the target's own counters never move.
SELECT pid, query_id,
       extract(epoch FROM query_start)::float8 AS query_start, query
FROM pg_stat_activity
WHERE datid = $1 AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND pid <> $2
  AND query_start IS NOT NULL AND query <> ''
