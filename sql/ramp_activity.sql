/* pgcost */
-- pgcost ramp's sample of the target database's client backends ($1: its oid): their
-- state and what each waits for, pgcost's own table reader ($2, 0 when none) left out.
-- Read over the admin connection, so the target's own counters never move.
SELECT pid, state, wait_event_type
FROM pg_stat_activity
WHERE datid = $1 AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND pid <> $2
