/* pgcost */
-- pgcost ramp's reading of the target database's statement execution time so far ($1: its
-- oid), once a second during a step: its growth over each second, divided by that
-- second's responses, gives the spread of the step's db time per request. Texts skipped;
-- read over the admin connection, so the target's own counters never move.
SELECT coalesce(sum(total_exec_time), 0)::float8 AS exec_time_ms
FROM pg_stat_statements(false)
WHERE dbid = $1
