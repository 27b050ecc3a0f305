/* pgcost */
-- The texts of some pg_stat_statements entries, before 1.9 (PostgreSQL 13 and older): no
-- `toplevel` column, and one entry per (userid, dbid, queryid). See statement_texts.sql.
SELECT userid::oid AS userid, queryid, NULL::bool AS toplevel, query
FROM pg_stat_statements(true)
WHERE dbid = $1 AND queryid = ANY($2)
