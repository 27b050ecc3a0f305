-- Makes a fresh server audit-ready: pg_stat_statements in the app database and in the
-- `postgres` database, which pgcost reads cluster-wide views from (--admin-db).
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
\connect postgres
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
