/* pgcost */
-- sql/tag_activity.sql before PG 14, which has no query_id: statements are matched to
-- their pg_stat_statements entries by their folded text instead.
SELECT pid, NULL::bigint AS query_id,
       extract(epoch FROM query_start)::float8 AS query_start, query
FROM pg_stat_activity
WHERE datid = $1 AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND pid <> $2
  AND query_start IS NOT NULL AND query <> ''
