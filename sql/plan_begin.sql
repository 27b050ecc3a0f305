/* pgcost */
-- Opens the transaction a plan is fetched in: read-only and rolled back afterwards, with a
-- short timeout; a generic plan even where the statement is PREPAREd (13 to 15).
BEGIN READ ONLY;
SET LOCAL statement_timeout = '2s';
SET LOCAL lock_timeout = '1s';
SET LOCAL plan_cache_mode = force_generic_plan;
