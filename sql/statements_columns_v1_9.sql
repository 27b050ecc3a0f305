-- The columns of statements.sql in pg_stat_statements 1.9 to 1.12 (PostgreSQL 14 to 18):
-- `toplevel`, `total_exec_time`, plan time and the WAL counters.
toplevel, total_exec_time AS exec_time_ms,
-- Plan time (PG 13+) counts only while pg_stat_statements.track_planning is on:
-- NULL when it is off, so that 0 is never read as "no planning".
CASE WHEN current_setting('pg_stat_statements.track_planning', true) = 'on'
     THEN total_plan_time END AS plan_time_ms,
wal_records, wal_fpi, wal_bytes::bigint AS wal_bytes
