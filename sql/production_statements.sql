/* pgcost */
-- Production's statements for `pgcost survey --production-stats URL`: every entry of the
-- connected database, each row as one JSON object so that every extension version's
-- column layout (total_time up to 1.7, total_exec_time from 1.8) is read alike.
SELECT to_jsonb(s)::text AS entry
FROM pg_stat_statements s
WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
