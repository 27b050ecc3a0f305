/* pgcost */
-- A template (PostgreSQL 16+). The options are FORMAT TEXT or FORMAT JSON, VERBOSE; the
-- statement is the text plan_prepare.sql accepted as one statement. No ANALYZE: the
-- statement does not run.
EXPLAIN (GENERIC_PLAN, {options})
{statement}
