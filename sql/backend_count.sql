/* pgcost */
-- Client backends connected to the target database right now, other than pgcost's own
-- table reader ($2, 0 when there is none).
SELECT count(*)::bigint FROM pg_stat_activity WHERE datid = $1 AND backend_type = 'client backend' AND pid <> $2
