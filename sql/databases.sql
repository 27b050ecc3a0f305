/* pgcost */
-- Every database's transactions and rows read, to name a database that moved during the
-- window without being measured. The templates and the shared row (no datname) are left out.
SELECT d.datname AS name,
       s.xact_commit + s.xact_rollback AS transactions,
       s.tup_returned
FROM pg_stat_database s
JOIN pg_database d ON d.oid = s.datid
WHERE NOT d.datistemplate
