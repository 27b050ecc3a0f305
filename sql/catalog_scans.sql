/* pgcost */
-- Scans of each system catalog and catalog index of the connected database, by oid (a
-- heap's sequential scans, an index's index scans), read without touching any catalog, so
-- that reading them leaves no scan of its own once the functions are cached. A backend
-- that loads its caches of the catalog (a new connection, an invalidation after ANALYZE
-- or DDL) scans them; a warm one running the same requests does not.
SELECT o::int4 AS oid, pg_stat_get_numscans(o::oid) AS scans
FROM generate_series(1, 16383) o
WHERE pg_stat_get_numscans(o::oid) > 0
