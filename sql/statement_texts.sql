/* pgcost */
-- pg_stat_statements 1.9 and later: the texts of some entries, read after the window
-- closes for the entries that changed in it only: snapshots skip the texts
-- (pg_stat_statements(false)). Keyed with `toplevel` too: with track = all, a statement
-- also run nested (pgcost's own EXPLAIN of it, for one) has a second entry, with its own
-- text, under the same query id.
SELECT userid::oid AS userid, queryid, toplevel, query
FROM pg_stat_statements(true)
WHERE dbid = $1 AND queryid = ANY($2)
