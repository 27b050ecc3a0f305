/* pgcost */
-- Hypothetical indexes outlive a rollback: drop them.
SELECT hypopg_reset()
