/* pgcost */
-- After a failed custom plan: back to where the generic plan was fetched.
ROLLBACK TO SAVEPOINT pgcost_custom
