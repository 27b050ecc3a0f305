/* pgcost */
-- pg_stat_statements up to 1.8 (PostgreSQL 13): the texts of some entries, read after the
-- window closes (see statement_texts.sql). No `toplevel` column: one entry per query id.
SELECT userid::oid AS userid, queryid, NULL::bool AS toplevel, query
FROM pg_stat_statements(true)
WHERE dbid = $1 AND queryid = ANY($2)
