/* pgcost */
-- A template: the placeholder on the last line becomes the app's normalized statement
-- text, read from pg_stat_statements. Sent over the extended protocol, which refuses a
-- text of more than one statement; PREPARE takes only SELECT, INSERT, UPDATE, DELETE,
-- MERGE and VALUES.
PREPARE pgcost_plan AS
{statement}
