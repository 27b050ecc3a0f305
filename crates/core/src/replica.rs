//! Read replicas (`--replica`) and what the nodes' counters say about where a request's
//! database work ran: a replica's recovery state and replay lag, counters that moved while
//! the app was idle (background), and a burst that moved no counter at all. No I/O.

use std::time::Duration;

use crate::delta::WindowDelta;
use crate::load::LoadResult;
use crate::report::model::notes::Note;

/// The role of a hot standby the app reads from (`--replica`).
pub const REPLICA: &str = "replica";

/// A replica's recovery state, read on the standby itself after the window closed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Recovery {
    /// `pg_is_in_recovery()`: false on a primary (or a promoted standby).
    pub in_recovery: bool,
    /// WAL received from the primary but not replayed yet, in bytes; `None` when the
    /// standby is not streaming (`pg_last_wal_receive_lsn()` is NULL).
    pub replay_behind_bytes: Option<f64>,
    /// Seconds since the last replayed transaction was committed on the primary; `None`
    /// before the first replayed one.
    pub since_last_replay_seconds: Option<f64>,
}

impl Recovery {
    /// How far the replay is behind the primary, in seconds: 0 once everything received
    /// was replayed (an idle primary sends nothing, however old the last commit is), else
    /// the age of the last replayed commit. `None` when it cannot be told.
    pub fn lag_seconds(&self) -> Option<f64> {
        match self.replay_behind_bytes? {
            behind if behind <= 0.0 => Some(0.0),
            _ => self.since_last_replay_seconds.map(|s| s.max(0.0)),
        }
    }
}

/// The lines about a replica's recovery state: not in recovery at all (it is a primary,
/// so the node's role is wrong, though its figures are still counted), or a replay lag
/// longer than `settle_timeout`. `node` names the replica as the report does.
pub fn recovery_warnings(node: &str, recovery: &Recovery, settle_timeout: Duration) -> Vec<Note> {
    if !recovery.in_recovery {
        return vec![Note::ReplicaNotInRecovery { node: node.into() }];
    }
    let timeout = settle_timeout.as_secs_f64();
    match recovery.lag_seconds() {
        Some(lag) if lag > timeout => vec![Note::ReplicaLag {
            node: node.into(),
            lag_seconds: lag,
            settle_timeout_seconds: timeout,
        }],
        _ => Vec::new(),
    }
}

/// True when the load ran to its end without a failure: with pgcost's burst, every
/// request got a response below 400; with a load command (`pgcost measure`), it exited
/// with 0 (the failures its tool reports make the report not valid, and the caller does
/// not ask then).
fn every_request_succeeded(load: &LoadResult) -> bool {
    let answered = match load.command_exit {
        Some(exit) => exit == 0 && load.sent > 0,
        None => load.responses() > 0 && load.status.keys().all(|&code| code < 400),
    };
    answered && !load.interrupted && load.error_count() == 0
}

/// True when no counter of the measured nodes moved: no transaction, no statement, no row.
fn moved_nothing(delta: &WindowDelta) -> bool {
    let d = &delta.database;
    let rows = d.tup_returned + d.tup_fetched + d.tup_inserted + d.tup_updated + d.tup_deleted;
    d.xact_commit + d.xact_rollback == 0
        && rows == 0
        && delta.statements.iter().all(|s| s.calls == 0)
}

/// The line for a burst whose requests all succeeded but moved no counter of any measured
/// node (`delta` is their sum): the app's database work happened elsewhere. Asked of a
/// window that is otherwise valid.
pub fn moved_nothing_warning(delta: &WindowDelta, load: &LoadResult) -> Option<Note> {
    (every_request_succeeded(load) && moved_nothing(delta)).then_some(Note::MovedNothing {
        requests: load.sent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delta::StatementDelta;
    use crate::snapshot::StatementKey;

    fn standby(behind: Option<f64>, since: Option<f64>) -> Recovery {
        Recovery {
            in_recovery: true,
            replay_behind_bytes: behind,
            since_last_replay_seconds: since,
        }
    }

    const TIMEOUT: Duration = Duration::from_secs(30);

    #[test]
    fn a_caught_up_standby_has_no_lag_however_old_its_last_replay() {
        assert_eq!(standby(Some(0.0), Some(3600.0)).lag_seconds(), Some(0.0));
        assert!(recovery_warnings("r", &standby(Some(0.0), Some(3600.0)), TIMEOUT).is_empty());
        assert_eq!(standby(None, Some(3600.0)).lag_seconds(), None);
        assert_eq!(standby(Some(8192.0), None).lag_seconds(), None);
    }

    #[test]
    fn a_standby_behind_by_more_than_the_settle_timeout_is_named() {
        assert!(recovery_warnings("r", &standby(Some(8192.0), Some(30.0)), TIMEOUT).is_empty());
        let lines = recovery_warnings("app@h:5433", &standby(Some(8192.0), Some(42.25)), TIMEOUT);
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].message().starts_with(
                "replica app@h:5433 replayed the primary's changes 42.2 s late at the end of \
                 the window (more than --settle-timeout, 30 s)"
            ),
            "{}",
            lines[0]
        );
        assert_eq!(lines[0].code(), "replica_lag");
    }

    #[test]
    fn a_replica_that_is_not_in_recovery_is_named_and_nothing_else() {
        let primary = Recovery {
            in_recovery: false,
            replay_behind_bytes: None,
            since_last_replay_seconds: None,
        };
        let lines = recovery_warnings("app@h:5432", &primary, TIMEOUT);
        assert_eq!(lines.len(), 1);
        assert_eq!(
            lines[0],
            Note::ReplicaNotInRecovery {
                node: "app@h:5432".into()
            }
        );
        assert!(
            lines[0]
                .message()
                .starts_with("--replica app@h:5432 is not in recovery")
        );
    }

    fn load(status: &[(u16, u64)], errors: u64) -> LoadResult {
        LoadResult {
            status: status.iter().copied().collect(),
            errors: match errors {
                0 => Default::default(),
                n => [("timeout".to_string(), n)].into(),
            },
            ..LoadResult::new(100, 2, Duration::from_secs(1))
        }
    }

    #[test]
    fn a_successful_burst_that_moved_nothing_is_named_with_the_replica_flag() {
        let nothing = WindowDelta::default();
        let note = moved_nothing_warning(&nothing, &load(&[(200, 100)], 0)).unwrap();
        assert_eq!(note, Note::MovedNothing { requests: 100 });
        assert!(note.in_header());
        let line = note.message();
        assert!(line.contains("0 transactions, 0 statements, 0 rows in 100 requests"));
        assert!(line.contains("--replica URL"));
        // A failed request, or a rejection, is another story: the report says so already.
        assert_eq!(
            moved_nothing_warning(&nothing, &load(&[(200, 99)], 1)),
            None
        );
        assert_eq!(
            moved_nothing_warning(&nothing, &load(&[(200, 99), (404, 1)], 0)),
            None
        );
        assert_eq!(moved_nothing_warning(&nothing, &load(&[], 0)), None);
        // A load command that exited with 0: its tool reports no status.
        let command = |exit| LoadResult {
            command_exit: Some(exit),
            ..load(&[], 0)
        };
        assert!(moved_nothing_warning(&nothing, &command(0)).is_some());
        assert_eq!(moved_nothing_warning(&nothing, &command(1)), None);
    }

    #[test]
    fn any_transaction_statement_or_row_counts_as_movement() {
        let ok = load(&[(200, 100)], 0);
        let mut rows = WindowDelta::default();
        rows.database.tup_fetched = 1;
        assert_eq!(moved_nothing_warning(&rows, &ok), None);
        let mut rollback = WindowDelta::default();
        rollback.database.xact_rollback = 1;
        assert_eq!(moved_nothing_warning(&rollback, &ok), None);
        let mut statement = WindowDelta::default();
        statement.statements.push(StatementDelta {
            key: StatementKey {
                userid: 10,
                queryid: 1,
                toplevel: Some(true),
            },
            query: "SELECT 1".into(),
            calls: 1,
            rows: 1,
            exec_time_ms: 0.0,
            plan_time_ms: None,
            shared_blks_hit: 0,
            shared_blks_read: 0,
            writes: Default::default(),
        });
        assert_eq!(moved_nothing_warning(&statement, &ok), None);
        // Sessions and blocks alone are not the app's work (a pool's connection check).
        let mut sessions = WindowDelta::default();
        sessions.database.sessions = Some(2);
        sessions.database.blks_hit = 5;
        assert!(moved_nothing_warning(&sessions, &ok).is_some());
    }
}
