//! Pure arithmetic on snapshots: `delta(before, after)`, the tool's own footprint, and
//! division by the request count. No I/O lives here.

use crate::cost::snapshot::{DatabaseStats, Snapshot, StatementKey, TableStats};

/// Counter growth of `pg_stat_database` over the window.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DatabaseDelta {
    pub xact_commit: i64,
    pub xact_rollback: i64,
    pub tup_returned: i64,
    pub tup_fetched: i64,
    pub tup_inserted: i64,
    pub tup_updated: i64,
    pub tup_deleted: i64,
    pub blks_hit: i64,
    pub blks_read: i64,
    pub sessions: Option<i64>,
}

impl DatabaseDelta {
    /// Field-wise saturating subtraction, used to take the tool's own footprint out.
    pub fn minus(&self, other: &DatabaseDelta) -> DatabaseDelta {
        let sub = |a: i64, b: i64| (a - b).max(0);
        DatabaseDelta {
            xact_commit: sub(self.xact_commit, other.xact_commit),
            xact_rollback: sub(self.xact_rollback, other.xact_rollback),
            tup_returned: sub(self.tup_returned, other.tup_returned),
            tup_fetched: sub(self.tup_fetched, other.tup_fetched),
            tup_inserted: sub(self.tup_inserted, other.tup_inserted),
            tup_updated: sub(self.tup_updated, other.tup_updated),
            tup_deleted: sub(self.tup_deleted, other.tup_deleted),
            blks_hit: sub(self.blks_hit, other.blks_hit),
            blks_read: sub(self.blks_read, other.blks_read),
            sessions: match (self.sessions, other.sessions) {
                (Some(a), Some(b)) => Some(sub(a, b)),
                (a, _) => a,
            },
        }
    }

    /// Field-wise multiplication, for a per-operation footprint seen `times` times.
    pub fn times(&self, times: i64) -> DatabaseDelta {
        DatabaseDelta {
            xact_commit: self.xact_commit * times,
            xact_rollback: self.xact_rollback * times,
            tup_returned: self.tup_returned * times,
            tup_fetched: self.tup_fetched * times,
            tup_inserted: self.tup_inserted * times,
            tup_updated: self.tup_updated * times,
            tup_deleted: self.tup_deleted * times,
            blks_hit: self.blks_hit * times,
            blks_read: self.blks_read * times,
            sessions: self.sessions.map(|s| s * times),
        }
    }

    /// Field-wise sum.
    pub fn plus(&self, other: &DatabaseDelta) -> DatabaseDelta {
        self.minus(&other.times(-1))
    }
}

/// Growth of one `pg_stat_statements` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct StatementDelta {
    pub key: StatementKey,
    pub query: String,
    pub calls: i64,
    pub rows: i64,
    pub exec_time_ms: f64,
    pub shared_blks_hit: i64,
    pub shared_blks_read: i64,
}

/// Growth of one table's counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableDelta {
    pub name: String,
    pub seq_scan: i64,
    pub seq_tup_read: i64,
    pub idx_scan: i64,
    pub idx_tup_fetch: i64,
    pub n_tup_ins: i64,
    pub n_tup_upd: i64,
    pub n_tup_del: i64,
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
    pub invalid_reasons: Vec<String>,
    /// Caveats that do not invalidate the measurement.
    pub warnings: Vec<String>,
}

fn database_delta(
    before: &DatabaseStats,
    after: &DatabaseStats,
    invalid: &mut Vec<String>,
) -> DatabaseDelta {
    let mut diff = |name: &str, b: i64, a: i64| {
        if a < b {
            invalid.push(format!(
                "pg_stat_database.{name} went backwards ({b} -> {a}): the server restarted or its statistics were reset"
            ));
            0
        } else {
            a - b
        }
    };
    DatabaseDelta {
        xact_commit: diff("xact_commit", before.xact_commit, after.xact_commit),
        xact_rollback: diff("xact_rollback", before.xact_rollback, after.xact_rollback),
        tup_returned: diff("tup_returned", before.tup_returned, after.tup_returned),
        tup_fetched: diff("tup_fetched", before.tup_fetched, after.tup_fetched),
        tup_inserted: diff("tup_inserted", before.tup_inserted, after.tup_inserted),
        tup_updated: diff("tup_updated", before.tup_updated, after.tup_updated),
        tup_deleted: diff("tup_deleted", before.tup_deleted, after.tup_deleted),
        blks_hit: diff("blks_hit", before.blks_hit, after.blks_hit),
        blks_read: diff("blks_read", before.blks_read, after.blks_read),
        sessions: match (before.sessions, after.sessions) {
            (Some(b), Some(a)) => Some(diff("sessions", b, a)),
            _ => None,
        },
    }
}

fn table_delta(
    name: &str,
    before: Option<&TableStats>,
    after: &TableStats,
) -> Result<TableDelta, String> {
    let zero = TableStats::default();
    let b = before.unwrap_or(&zero);
    let fields = [
        ("seq_scan", b.seq_scan, after.seq_scan),
        ("seq_tup_read", b.seq_tup_read, after.seq_tup_read),
        ("idx_scan", b.idx_scan, after.idx_scan),
        ("idx_tup_fetch", b.idx_tup_fetch, after.idx_tup_fetch),
        ("n_tup_ins", b.n_tup_ins, after.n_tup_ins),
        ("n_tup_upd", b.n_tup_upd, after.n_tup_upd),
        ("n_tup_del", b.n_tup_del, after.n_tup_del),
    ];
    if let Some((field, b, a)) = fields.iter().find(|(_, b, a)| a < b) {
        return Err(format!(
            "pg_stat_user_tables.{field} of {name} went backwards ({b} -> {a})"
        ));
    }
    Ok(TableDelta {
        name: name.to_string(),
        seq_scan: after.seq_scan - b.seq_scan,
        seq_tup_read: after.seq_tup_read - b.seq_tup_read,
        idx_scan: after.idx_scan - b.idx_scan,
        idx_tup_fetch: after.idx_tup_fetch - b.idx_tup_fetch,
        n_tup_ins: after.n_tup_ins - b.n_tup_ins,
        n_tup_upd: after.n_tup_upd - b.n_tup_upd,
        n_tup_del: after.n_tup_del - b.n_tup_del,
        relpages: after.relpages,
        n_live_tup: after.n_live_tup,
    })
}

/// Compares two snapshots. Never fails: anything that makes the numbers untrustworthy is
/// recorded in `invalid_reasons` instead.
pub fn delta(before: &Snapshot, after: &Snapshot) -> WindowDelta {
    let mut invalid = Vec::new();
    let mut warnings = Vec::new();

    if before.server_started.is_some()
        && after.server_started.is_some()
        && before.server_started != after.server_started
    {
        invalid.push(format!(
            "the server restarted during the window (started {} -> {}): counters pending in \
             the app's backends were lost",
            before.server_started.as_deref().unwrap_or(""),
            after.server_started.as_deref().unwrap_or("")
        ));
    }
    if before.database.stats_reset != after.database.stats_reset {
        invalid.push(format!(
            "pg_stat_database.stats_reset changed during the window ({} -> {}): the counters were reset",
            before.database.stats_reset.as_deref().unwrap_or("never"),
            after.database.stats_reset.as_deref().unwrap_or("never"),
        ));
    }
    let database = database_delta(&before.database, &after.database, &mut invalid);

    match (&before.statements_info, &after.statements_info) {
        (Some(b), Some(a)) => {
            if a.stats_reset != b.stats_reset {
                invalid.push(
                    "pg_stat_statements was reset during the window (pg_stat_statements_info.stats_reset changed)"
                        .to_string(),
                );
            } else if a.dealloc != b.dealloc {
                invalid.push(format!(
                    "pg_stat_statements evicted entries during the window (dealloc {} -> {}): statements, \
                     rows_returned, db_time_ms and the per-statement breakdown may be incomplete; \
                     raise pg_stat_statements.max",
                    b.dealloc, a.dealloc
                ));
            }
        }
        (Some(_), None) | (None, Some(_)) => {
            invalid.push(
                "pg_stat_statements_info could be read on one side of the window only".to_string(),
            );
        }
        (None, None) => {}
    }

    let mut statements = Vec::new();
    for (key, a) in &after.statements {
        let b = before.statements.get(key);
        let (calls0, rows0, time0, hit0, read0) = b
            .map(|b| {
                (
                    b.calls,
                    b.rows,
                    b.exec_time_ms,
                    b.shared_blks_hit,
                    b.shared_blks_read,
                )
            })
            .unwrap_or((0, 0, 0.0, 0, 0));
        if a.calls < calls0 || a.rows < rows0 {
            invalid.push(format!(
                "pg_stat_statements entry {} went backwards (calls {} -> {}): it was evicted and recreated",
                key.queryid, calls0, a.calls
            ));
            continue;
        }
        // Unchanged, or pgcost's own statement (its SQL is marked so).
        if a.calls == calls0 || a.query.starts_with(crate::cost::snapshot::OWN_MARK) {
            continue;
        }
        statements.push(StatementDelta {
            key: key.clone(),
            query: a.query.clone(),
            calls: a.calls - calls0,
            rows: a.rows - rows0,
            exec_time_ms: (a.exec_time_ms - time0).max(0.0),
            shared_blks_hit: (a.shared_blks_hit - hit0).max(0),
            shared_blks_read: (a.shared_blks_read - read0).max(0),
        });
    }
    let vanished = before
        .statements
        .keys()
        .filter(|k| !after.statements.contains_key(k))
        .count();
    if vanished > 0 && after.statements_info.is_none() {
        warnings.push(format!(
            "{vanished} pg_stat_statements entries vanished during the window: entries may have been evicted"
        ));
    }

    let mut tables = Vec::new();
    for (name, a) in &after.tables {
        match table_delta(name, before.tables.get(name), a) {
            Ok(t) => {
                let moved = t.seq_scan + t.idx_scan + t.n_tup_ins + t.n_tup_upd + t.n_tup_del;
                if moved > 0 {
                    tables.push(t);
                }
            }
            Err(reason) => invalid.push(reason),
        }
    }

    WindowDelta {
        database,
        statements,
        tables,
        invalid_reasons: invalid,
        warnings,
    }
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
    use crate::cost::snapshot::{StatementStats, StatementsInfo};

    fn db(commit: i64, returned: i64) -> DatabaseStats {
        DatabaseStats {
            xact_commit: commit,
            tup_returned: returned,
            sessions: Some(3),
            stats_reset: Some("2026-11-29 10:00:00+00".into()),
            ..Default::default()
        }
    }

    fn stmt(query: &str, calls: i64, rows: i64) -> StatementStats {
        StatementStats {
            query: query.into(),
            calls,
            rows,
            exec_time_ms: calls as f64 * 0.5,
            shared_blks_hit: calls,
            shared_blks_read: 0,
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
                .any(|r| r.contains("stats_reset changed"))
        );
        assert!(
            d.invalid_reasons
                .iter()
                .any(|r| r.contains("xact_commit went backwards"))
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
        assert!(
            d.invalid_reasons[0].contains("the server restarted"),
            "{:?}",
            d.invalid_reasons
        );
        assert!(delta(&before, &before).invalid_reasons.is_empty());
    }

    #[test]
    fn statements_new_grown_and_unchanged() {
        let mut before = Snapshot::default();
        before.statements.insert(key(1), stmt("SELECT 1", 10, 10));
        before.statements.insert(key(2), stmt("SELECT 2", 5, 5));
        let mut after = before.clone();
        after.statements.insert(key(1), stmt("SELECT 1", 210, 410));
        after.statements.insert(key(3), stmt("BEGIN", 200, 0));
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
            .insert(key(1), stmt("/* pgcost */\nSELECT relname FROM t", 2, 9));
        after.statements.insert(key(2), stmt("SELECT 2", 4, 4));
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
        before.statements.insert(key(1), stmt("SELECT 1", 100, 100));
        let mut after = Snapshot {
            statements_info: info(1),
            ..Default::default()
        };
        after.statements.insert(key(1), stmt("SELECT 1", 3, 3));
        let d = delta(&before, &after);
        assert!(
            d.invalid_reasons
                .iter()
                .any(|r| r.contains("evicted entries"))
        );
        assert!(
            d.invalid_reasons
                .iter()
                .any(|r| r.contains("went backwards"))
        );
        assert!(d.statements.is_empty());
    }

    #[test]
    fn tables_that_did_not_move_are_dropped() {
        let t = |seq_scan, seq_tup_read| TableStats {
            seq_scan,
            seq_tup_read,
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
            (d.tables[0].seq_scan, d.tables[0].seq_tup_read),
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
