/* pgcost */
-- The texts of some pg_stat_statements entries, read after the window closes for the
-- entries that changed in it only: snapshots skip the texts (pg_stat_statements(false)).
SELECT userid::oid AS userid, queryid, query
FROM pg_stat_statements(true)
WHERE dbid = $1 AND queryid = ANY($2)
