/* pgcost */
-- The texts of some pg_stat_statements entries, extension 1.9 and later: as
-- statement_texts.sql, with `toplevel`, since a nested entry (e.g. the statement inside a
-- PREPARE) shares its queryid with the top-level one but has its own text.
SELECT userid::oid AS userid, queryid, toplevel, query
FROM pg_stat_statements(true)
WHERE dbid = $1 AND queryid = ANY($2)
