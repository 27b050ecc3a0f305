/* pgcost */
-- Ends the plan's transaction: nothing it did is kept.
ROLLBACK
