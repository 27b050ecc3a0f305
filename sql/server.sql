/* pgcost */
-- What the server is and what this role may see. $1 is the target database's name.
SELECT current_setting('server_version_num')::int AS version_num,
       current_setting('server_version') AS version,
       (SELECT oid FROM pg_database WHERE datname = $1) AS target_oid,
       -- shared_preload_libraries needs pg_read_all_settings; the library's own settings
       -- exist in every backend exactly when it is preloaded, and anyone may see them.
       EXISTS (SELECT 1 FROM pg_settings WHERE name = 'pg_stat_statements.max') AS preloads_statements,
       (pg_has_role(current_user, 'pg_read_all_stats', 'USAGE')
        OR (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)) AS read_all_stats,
       current_setting('max_connections')::int AS max_connections,
       current_setting('track_counts')::bool AS track_counts,
       coalesce(current_setting('compute_query_id', true), 'auto') AS compute_query_id,
       current_user::text AS role,
       -- BEGIN and COMMIT are statements only when utility statements are tracked.
       (coalesce(current_setting('pg_stat_statements.track_utility', true), 'off') = 'on'
        AND coalesce(current_setting('pg_stat_statements.track', true), 'none') <> 'none')
         AS tracks_utility,
       -- Plan time per statement (pg_stat_statements 1.8, PG 13+) is counted only when on.
       coalesce(current_setting('pg_stat_statements.track_planning', true), 'off') = 'on'
         AS track_planning
