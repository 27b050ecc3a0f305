/* pgcost */
-- PostgreSQL 15 and later: flush this backend's own pending counters when it next goes idle.
SELECT pg_stat_force_next_flush()
