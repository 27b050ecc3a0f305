/* pgcost */
-- The transaction id the server will give next, with its epoch, without taking one: the
-- bounds of the ids a run with --allow-writes used. txid_* works on every supported version.
SELECT txid_snapshot_xmax(txid_current_snapshot()) AS next_xid
