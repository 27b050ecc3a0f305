/* pgcost */
-- Before the custom plan: its representative values may not cast to the parameters'
-- types, and a failure must not lose the generic plan fetched before it.
SAVEPOINT pgcost_custom
