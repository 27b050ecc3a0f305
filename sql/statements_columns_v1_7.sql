-- The columns of statements.sql that pg_stat_statements up to 1.7 (PostgreSQL 12) lacks or
-- names otherwise: `total_time`, no `toplevel`, no plan time, no WAL counters.
NULL::bool AS toplevel, total_time AS exec_time_ms, NULL::float8 AS plan_time_ms,
NULL::bigint AS wal_records, NULL::bigint AS wal_fpi, NULL::bigint AS wal_bytes
