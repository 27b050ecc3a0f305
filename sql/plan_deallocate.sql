/* pgcost */
-- Prepared statements outlive a rollback.
DEALLOCATE pgcost_plan
