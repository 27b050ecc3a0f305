/* pgcost */
-- A replica's recovery state, read on the standby after a window closed: whether it is in
-- recovery at all, the WAL it received but has not replayed yet (bytes; NULL when it is
-- not streaming, or on a primary), and the age of the last commit it replayed (NULL before
-- the first). Reads only: a hot standby accepts nothing else.
SELECT pg_is_in_recovery() AS in_recovery,
       pg_wal_lsn_diff(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn())::float8
         AS replay_behind_bytes,
       extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp())::float8
         AS since_last_replay_seconds
