/* pgcost */
-- How many parameters ($1, $2, ...) the prepared statement takes.
SELECT cardinality(parameter_types)::int4 FROM pg_prepared_statements WHERE name = 'pgcost_plan'
