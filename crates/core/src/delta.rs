//! Pure arithmetic on snapshots: `delta(before, after)`, the tool's own footprint, and
//! division by the request count. No I/O lives here.

use crate::report::model::counters::{Counter, DatabaseCounters, TableCounters};
use crate::report::model::invalid::{Code, Invalid};
use crate::report::model::notes::Note;
use crate::snapshot::{DatabaseStats, OWN_MARK, Snapshot, StatementStats, TableStats};

/// Counter growth of `pg_stat_database` over the window.
pub type DatabaseDelta = DatabaseCounters;

/// Growth of one `pg_stat_statements` entry: its counters over the window.
pub type StatementDelta = StatementStats;

/// Growth of one table's counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableDelta {
    pub name: String,
    pub counters: TableCounters,
    /// The table's size and live rows at the end of the window, as read then.
    pub relpages: i64,
    pub n_live_tup: i64,
}

/// Everything that changed between two snapshots, plus the reasons the change cannot be
/// trusted, if any.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WindowDelta {
    pub database: DatabaseDelta,
    /// Only entries whose `calls` grew.
    pub statements: Vec<StatementDelta>,
    /// Only tables whose counters moved.
    pub tables: Vec<TableDelta>,
    /// Each entry makes the measurement invalid and says why.
    pub invalid_reasons: Vec<Invalid>,
    /// Caveats that do not invalidate the measurement.
    pub warnings: Vec<Note>,
}

/// Compares two snapshots. Never fails: anything that makes the numbers untrustworthy is
/// recorded in `invalid_reasons` instead.
pub fn delta(before: &Snapshot, after: &Snapshot) -> WindowDelta {
    let mut invalid = restart_or_reset(before, after);
    let database = database_delta(&before.database, &after.database, &mut invalid);
    invalid.extend(statements_reset_or_evicted(before, after));
    let (statements, warnings) = statement_deltas(before, after, &mut invalid);
    let tables = table_deltas(before, after, &mut invalid);
    WindowDelta {
        database,
        statements,
        tables,
        invalid_reasons: invalid,
        warnings,
    }
}

/// A server restart or a reset of `pg_stat_database` inside the window.
fn restart_or_reset(before: &Snapshot, after: &Snapshot) -> Vec<Invalid> {
    let mut invalid = Vec::new();
    if before.server_started.is_some()
        && after.server_started.is_some()
        && before.server_started != after.server_started
    {
        invalid.push(Invalid::new(
            Code::ServerRestarted,
            format!(
                "the server restarted during the window (started {} -> {}): counters pending in \
             the app's backends were lost",
                before.server_started.as_deref().unwrap_or(""),
                after.server_started.as_deref().unwrap_or("")
            ),
        ));
    }
    if before.database.stats_reset != after.database.stats_reset {
        invalid.push(Invalid::new(Code::StatsReset, format!(
            "pg_stat_database.stats_reset changed during the window ({} -> {}): the counters were reset",
            before.database.stats_reset.as_deref().unwrap_or("never"),
            after.database.stats_reset.as_deref().unwrap_or("never"),
        )));
    }
    invalid
}

fn database_delta(
    before: &DatabaseStats,
    after: &DatabaseStats,
    invalid: &mut Vec<Invalid>,
) -> DatabaseDelta {
    let (grown, backwards) = after.counters.since(&before.counters);
    invalid.extend(backwards.iter().map(|b| {
        let message = format!(
            "pg_stat_database.{} went backwards ({} -> {}): the server restarted or its statistics were reset",
            b.counter, b.before, b.after
        );
        Invalid::new(Code::CounterWentBackwards, message)
    }));
    grown
}

/// What `pg_stat_statements_info` says about the window, when it can be read.
fn statements_reset_or_evicted(before: &Snapshot, after: &Snapshot) -> Option<Invalid> {
    match (&before.statements_info, &after.statements_info) {
        (Some(b), Some(a)) if a.stats_reset != b.stats_reset => Some(Invalid::new(
            Code::StatsReset,
            "pg_stat_statements was reset during the window (pg_stat_statements_info.stats_reset changed)",
        )),
        (Some(b), Some(a)) if a.dealloc != b.dealloc => Some(Invalid::new(
            Code::StatementsEvicted,
            format!(
                "pg_stat_statements evicted entries during the window (dealloc {} -> {}): statements, \
             rows_returned, db_time_ms and the per-statement breakdown may be incomplete; \
             raise pg_stat_statements.max",
                b.dealloc, a.dealloc
            ),
        )),
        (Some(_), None) | (None, Some(_)) => Some(Invalid::new(
            Code::StatementsInfoOneSided,
            "pg_stat_statements_info could be read on one side of the window only",
        )),
        _ => None,
    }
}

/// The entries whose calls grew, other than pgcost's own; and a warning when entries
/// vanished with no `pg_stat_statements_info` to tell whether they were evicted.
fn statement_deltas(
    before: &Snapshot,
    after: &Snapshot,
    invalid: &mut Vec<Invalid>,
) -> (Vec<StatementDelta>, Vec<Note>) {
    let mut statements = Vec::new();
    let new = StatementStats::default();
    for (key, a) in &after.statements {
        let b = before.statements.get(key).unwrap_or(&new);
        if a.calls < b.calls || a.rows < b.rows {
            invalid.push(Invalid::new(Code::StatementsEvicted, format!(
                "pg_stat_statements entry {} went backwards (calls {} -> {}): it was evicted and recreated",
                key.queryid, b.calls, a.calls
            )));
            continue;
        }
        // Each counter floored at 0; a new entry, or a counter `b` lacks, grows whole.
        let grown = a.minus(b);
        // Unchanged, or pgcost's own statement (its SQL is marked so).
        if grown.calls == 0 || a.query.starts_with(OWN_MARK) {
            continue;
        }
        statements.push(grown);
    }
    let mut warnings = Vec::new();
    let vanished = before
        .statements
        .keys()
        .filter(|k| !after.statements.contains_key(k))
        .count();
    if vanished > 0 && after.statements_info.is_none() {
        warnings.push(Note::PgStatStatementsEntriesVanished {
            entries: vanished,
            node: None,
        });
    }
    (statements, warnings)
}

/// The tables whose counters moved; a table whose counters went backwards is left out,
/// and says why in `invalid`.
fn table_deltas(
    before: &Snapshot,
    after: &Snapshot,
    invalid: &mut Vec<Invalid>,
) -> Vec<TableDelta> {
    let mut tables = Vec::new();
    for (name, a) in &after.tables {
        match table_delta(name, before.tables.get(name), a) {
            Ok(t) => {
                let c = &t.counters;
                let moved = c.seq_scan + c.idx_scan + c.n_tup_ins + c.n_tup_upd + c.n_tup_del;
                if moved > 0 {
                    tables.push(t);
                }
            }
            Err(reason) => invalid.push(reason),
        }
    }
    tables
}

fn table_delta(
    name: &str,
    before: Option<&TableStats>,
    after: &TableStats,
) -> Result<TableDelta, Invalid> {
    let zero = TableCounters::default();
    let (counters, backwards) = after.counters.since(before.map_or(&zero, |b| &b.counters));
    if let Some(b) = backwards.first() {
        return Err(Invalid::new(
            Code::CounterWentBackwards,
            format!(
                "pg_stat_user_tables.{} of {name} went backwards ({} -> {})",
                b.counter, b.before, b.after
            ),
        ));
    }
    Ok(TableDelta {
        name: name.to_string(),
        counters,
        relpages: after.relpages,
        n_live_tup: after.n_live_tup,
    })
}

/// `part / requests`, the one place where per-request division happens.
pub fn per_request(part: i64, requests: u64) -> f64 {
    if requests == 0 {
        0.0
    } else {
        part as f64 / requests as f64
    }
}

/// `part / whole` as a fraction, 0 when the whole is 0.
pub fn share(part: i64, whole: i64) -> f64 {
    if whole <= 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{StatementKey, StatementsInfo};

    fn db(commit: i64, returned: i64) -> DatabaseStats {
        DatabaseStats {
            counters: DatabaseCounters {
                xact_commit: commit,
                tup_returned: returned,
                sessions: Some(3),
                ..Default::default()
            },
            stats_reset: Some("2026-11-29 10:00:00+00".into()),
        }
    }

    fn stmt(id: i64, query: &str, calls: i64, rows: i64) -> StatementStats {
        StatementStats {
            key: key(id),
            query: query.into(),
            calls,
            rows,
            exec_time_ms: calls as f64 * 0.5,
            plan_time_ms: None,
            shared_blks_hit: calls,
            ..Default::default()
        }
    }

    fn key(id: i64) -> StatementKey {
        StatementKey {
            userid: 10,
            queryid: id,
            toplevel: Some(true),
        }
    }

    #[test]
    fn database_counters_subtract() {
        let before = Snapshot {
            database: db(100, 1000),
            ..Default::default()
        };
        let after = Snapshot {
            database: db(300, 11_000),
            ..Default::default()
        };
        let d = delta(&before, &after);
        assert!(d.invalid_reasons.is_empty());
        assert_eq!(d.database.xact_commit, 200);
        assert_eq!(d.database.tup_returned, 10_000);
        assert_eq!(d.database.sessions, Some(0));
        assert_eq!(per_request(d.database.tup_returned, 200), 50.0);
    }

    #[test]
    fn backwards_counter_and_reset_invalidate() {
        let before = Snapshot {
            database: db(300, 1000),
            ..Default::default()
        };
        let mut after_db = db(5, 10);
        after_db.stats_reset = Some("2026-11-29 11:00:00+00".into());
        let after = Snapshot {
            database: after_db,
            ..Default::default()
        };
        let d = delta(&before, &after);
        assert!(
            d.invalid_reasons
                .iter()
                .any(|r| r.code == Code::StatsReset && r.message.contains("stats_reset changed"))
        );
        assert!(
            d.invalid_reasons
                .iter()
                .any(|r| r.code == Code::CounterWentBackwards
                    && r.message.contains("xact_commit went backwards"))
        );
        assert_eq!(d.database.xact_commit, 0);
    }

    #[test]
    fn a_restart_invalidates() {
        let before = Snapshot {
            server_started: Some("10:00".into()),
            ..Default::default()
        };
        let after = Snapshot {
            server_started: Some("10:05".into()),
            ..Default::default()
        };
        let d = delta(&before, &after);
        assert_eq!(d.invalid_reasons[0].code, Code::ServerRestarted);
        assert!(
            d.invalid_reasons[0]
                .message
                .contains("the server restarted"),
            "{:?}",
            d.invalid_reasons
        );
        assert!(delta(&before, &before).invalid_reasons.is_empty());
    }

    #[test]
    fn statements_new_grown_and_unchanged() {
        let mut before = Snapshot::default();
        before
            .statements
            .insert(key(1), stmt(1, "SELECT 1", 10, 10));
        before.statements.insert(key(2), stmt(2, "SELECT 2", 5, 5));
        let mut after = before.clone();
        after
            .statements
            .insert(key(1), stmt(1, "SELECT 1", 210, 410));
        after.statements.insert(key(3), stmt(3, "BEGIN", 200, 0));
        let d = delta(&before, &after);
        assert!(d.invalid_reasons.is_empty(), "{:?}", d.invalid_reasons);
        assert_eq!(d.statements.len(), 2);
        let s1 = d.statements.iter().find(|s| s.key.queryid == 1).unwrap();
        assert_eq!((s1.calls, s1.rows), (200, 400));
        assert_eq!(s1.exec_time_ms, 100.0);
        let s3 = d.statements.iter().find(|s| s.key.queryid == 3).unwrap();
        assert_eq!((s3.calls, s3.rows), (200, 0));
    }

    #[test]
    fn pgcosts_own_statements_are_left_out() {
        let before = Snapshot::default();
        let mut after = before.clone();
        after
            .statements
            .insert(key(1), stmt(1, "/* pgcost */\nSELECT relname FROM t", 2, 9));
        after.statements.insert(key(2), stmt(2, "SELECT 2", 4, 4));
        let d = delta(&before, &after);
        assert_eq!(d.statements.len(), 1);
        assert_eq!(d.statements[0].key, key(2));
    }

    #[test]
    fn dealloc_movement_and_recreated_entry_invalidate() {
        let info = |dealloc| {
            Some(StatementsInfo {
                dealloc,
                stats_reset: None,
            })
        };
        let mut before = Snapshot {
            statements_info: info(0),
            ..Default::default()
        };
        before
            .statements
            .insert(key(1), stmt(1, "SELECT 1", 100, 100));
        let mut after = Snapshot {
            statements_info: info(1),
            ..Default::default()
        };
        after.statements.insert(key(1), stmt(1, "SELECT 1", 3, 3));
        let d = delta(&before, &after);
        assert!(
            d.invalid_reasons
                .iter()
                .any(|r| r.code == Code::StatementsEvicted && r.message.contains("evicted entries"))
        );
        assert!(
            d.invalid_reasons
                .iter()
                .any(|r| r.code == Code::StatementsEvicted && r.message.contains("went backwards"))
        );
        assert!(d.statements.is_empty());
    }

    #[test]
    fn tables_that_did_not_move_are_dropped() {
        let t = |seq_scan, seq_tup_read| TableStats {
            counters: TableCounters {
                seq_scan,
                seq_tup_read,
                ..Default::default()
            },
            relpages: 1,
            ..Default::default()
        };
        let mut before = Snapshot::default();
        before.tables.insert("public.a".into(), t(1, 50));
        before.tables.insert("public.b".into(), t(4, 4));
        let mut after = before.clone();
        after.tables.insert("public.a".into(), t(201, 10_050));
        let d = delta(&before, &after);
        assert_eq!(d.tables.len(), 1);
        assert_eq!(d.tables[0].name, "public.a");
        assert_eq!(
            (
                d.tables[0].counters.seq_scan,
                d.tables[0].counters.seq_tup_read
            ),
            (200, 10_000)
        );
    }

    #[test]
    fn footprint_arithmetic() {
        let measured = DatabaseDelta {
            xact_commit: 205,
            tup_returned: 10_030,
            sessions: Some(0),
            ..Default::default()
        };
        let per_poll = DatabaseDelta {
            xact_commit: 1,
            tup_returned: 6,
            sessions: Some(0),
            ..Default::default()
        };
        let once = DatabaseDelta {
            xact_commit: 2,
            tup_returned: 12,
            sessions: Some(0),
            ..Default::default()
        };
        let own = once.plus(&per_poll.times(3));
        assert_eq!(own.xact_commit, 5);
        let clean = measured.minus(&own);
        assert_eq!(clean.xact_commit, 200);
        assert_eq!(clean.tup_returned, 10_000);
    }

    #[test]
    fn per_request_and_share() {
        assert_eq!(per_request(7, 0), 0.0);
        assert_eq!(per_request(3, 2), 1.5);
        assert_eq!(share(1, 0), 0.0);
        assert_eq!(share(1, 4), 0.25);
    }
}
