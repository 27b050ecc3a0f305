/* pgcost */
-- When the server started: a change between two snapshots means it restarted.
SELECT pg_postmaster_start_time()::text
