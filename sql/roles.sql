/* pgcost */
-- Every role's oid and name: --app-role names roles, pg_stat_statements.userid is an oid.
SELECT oid, rolname::text AS name FROM pg_roles
