/* pgcost */
-- The server's connection limit and the slots reserved for superusers (and, PG 16+, for
-- pg_use_reserved_connections): what app pools may share.
SELECT current_setting('max_connections')::int AS max_connections,
       current_setting('superuser_reserved_connections')::int
         + coalesce(current_setting('reserved_connections', true), '0')::int AS reserved
