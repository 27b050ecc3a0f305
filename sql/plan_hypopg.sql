/* pgcost */
-- Whether hypopg (hypothetical indexes) is installed in the target database.
SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'hypopg')
