/* pgcost */
-- Back to generic plans after a custom one (see plan_begin.sql).
SET LOCAL plan_cache_mode = force_generic_plan
