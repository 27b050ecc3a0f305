/* pgcost */
-- The texts of some pg_stat_statements entries, read after the window closes for the
-- entries that changed in it only: snapshots skip the texts (pg_stat_statements(false)).
-- 1.9 and later (PostgreSQL 14+): an entry is also told apart by `toplevel`. A statement
-- run nested shares the queryid of the same statement run at top level, e.g. the app's
-- statement EXPLAINed by pgcost's plans (whose text is pgcost's PREPARE).
SELECT userid::oid AS userid, queryid, toplevel, query
FROM pg_stat_statements(true)
WHERE dbid = $1 AND queryid = ANY($2)
