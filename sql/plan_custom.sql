/* pgcost */
-- A custom plan for the next EXPLAIN EXECUTE: the parameters' values folded in, as a
-- prepared statement's first executions (and plan_cache_mode = auto, while a generic plan
-- costs more) plan it.
SET LOCAL plan_cache_mode = force_custom_plan
