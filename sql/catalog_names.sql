/* pgcost */
-- The names of the system catalogs and their indexes (oids below FirstNormalObjectId),
-- read once per connection, before its first catalog_scans.sql. Shared catalogs
-- (pg_database, pg_authid, ...) are left out: their scans are the whole cluster's, and
-- every read of pg_stat_activity, pgcost's own included, scans them.
SELECT oid::int4 AS oid, relname::text AS name
FROM pg_class
WHERE oid < 16384 AND NOT relisshared
