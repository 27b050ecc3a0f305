/* pgcost */
-- A hypothetical index, seen only by this backend's planner: $1 is a CREATE INDEX.
SELECT indexname FROM hypopg_create_index($1)
