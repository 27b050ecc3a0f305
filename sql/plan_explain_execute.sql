/* pgcost */
-- A template (PostgreSQL 13 to 15). The options are FORMAT TEXT or FORMAT JSON, VERBOSE;
-- the arguments are one NULL per parameter, e.g. (NULL, NULL), or nothing. Under
-- plan_cache_mode = force_generic_plan the NULLs are not folded into the plan. No
-- ANALYZE: the statement does not run.
EXPLAIN ({options}) EXECUTE pgcost_plan{arguments}
