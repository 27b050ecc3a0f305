/* pgcost */
-- The most common values of a column, as the text of an array ('{1,2,3}'): the first is
-- the representative value of a parameter compared with it in a custom plan. $1 is the
-- schema, $2 the table, $3 the column.
SELECT most_common_vals::text FROM pg_stats
WHERE schemaname = $1 AND tablename = $2 AND attname = $3
ORDER BY inherited
LIMIT 1
