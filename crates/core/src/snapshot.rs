//! Plain data read from the statistics views: one `Snapshot` per side of the measured window.

use std::collections::BTreeMap;

use crate::report::model::counters::{
    Backwards, Columns, Counter, DatabaseCounters, TableCounters, WriteCounters, counter_set,
};

/// The comment that opens every statement pgcost runs (each file of sql/), to tell its
/// own pg_stat_statements entries from the app's.
pub const OWN_MARK: &str = "/* pgcost */";

pub use crate::report::model::notes::UNAVAILABLE_TEXT;

/// The target database's row of `pg_stat_database`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DatabaseStats {
    pub counters: DatabaseCounters,
    /// `stats_reset` as text; `None` when the statistics were never reset.
    pub stats_reset: Option<String>,
}

/// Identity of one `pg_stat_statements` entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StatementKey {
    pub userid: u32,
    pub queryid: i64,
    /// `None` when the extension predates the `toplevel` column (before 1.9).
    pub toplevel: Option<bool>,
}

counter_set! {
    /// One `pg_stat_statements` entry's counters, as read, or their growth over a window
    /// (`delta::StatementDelta`). Two rows of one entry (one per database the view sums)
    /// add up with `plus`.
    #[derive(Debug, Clone, Default, PartialEq)]
    pub struct StatementStats {
        carried {
            pub key: StatementKey,
            /// Empty until named: snapshots read in admin mode skip the texts, and only the
            /// entries that changed in the window are named afterwards (`changed_unnamed`).
            pub query: String,
        }
        pub calls: i64,
        pub rows: i64,
        pub exec_time_ms: f64,
        /// `total_plan_time`: `None` before PG 13 or with pg_stat_statements.track_planning
        /// off.
        pub plan_time_ms: Option<f64>,
        pub shared_blks_hit: i64,
        pub shared_blks_read: i64,
        pub writes: WriteCounters,
    }
}

/// `pg_stat_statements_info`, present from extension version 1.9.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatementsInfo {
    pub dealloc: i64,
    pub stats_reset: Option<String>,
}

/// One row of `pg_stat_user_tables`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableStats {
    pub counters: TableCounters,
    /// Pages the table occupies (`pg_class.relpages`), to tell tiny tables apart.
    pub relpages: i64,
    /// Estimated live rows.
    pub n_live_tup: i64,
}

/// Everything read at one side of the window. Statement and table maps are empty when
/// the corresponding view could not be read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    pub database: DatabaseStats,
    pub statements: BTreeMap<StatementKey, StatementStats>,
    pub statements_info: Option<StatementsInfo>,
    /// Keyed by `schema.table`.
    pub tables: BTreeMap<String, TableStats>,
    /// `pg_postmaster_start_time()` as text: a change means the server restarted.
    pub server_started: Option<String>,
}

/// The query ids of the entries of `end` that changed since the window opened (their calls
/// differ from `start_calls`, or they are new) and have no text yet. Hidden entries (query
/// id 0, for lack of `pg_read_all_stats`) have no text to read.
pub fn changed_unnamed(
    start_calls: &BTreeMap<StatementKey, i64>,
    end: &BTreeMap<StatementKey, StatementStats>,
) -> Vec<StatementKey> {
    end.iter()
        .filter(|(key, stats)| {
            key.queryid != 0 && stats.query.is_empty() && start_calls.get(key) != Some(&stats.calls)
        })
        .map(|(key, _)| key.clone())
        .collect()
}

/// Each entry's calls, to tell later which entries changed.
pub fn calls(statements: &BTreeMap<StatementKey, StatementStats>) -> BTreeMap<StatementKey, i64> {
    statements
        .iter()
        .map(|(key, stats)| (key.clone(), stats.calls))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(query: &str, calls: i64) -> StatementStats {
        StatementStats {
            query: query.into(),
            calls,
            ..Default::default()
        }
    }

    fn key(queryid: i64) -> StatementKey {
        StatementKey {
            userid: 10,
            queryid,
            toplevel: Some(true),
        }
    }

    #[test]
    fn only_changed_or_new_entries_without_text_are_named() {
        let start: BTreeMap<_, _> = [(key(1), entry("", 5)), (key(2), entry("", 7))].into();
        let end: BTreeMap<_, _> = [
            (key(1), entry("", 5)),         // unchanged
            (key(2), entry("", 9)),         // changed
            (key(3), entry("", 1)),         // new
            (key(4), entry("SELECT 1", 2)), // new, already named
            (key(0), entry("", 40)),        // hidden
        ]
        .into();
        assert_eq!(changed_unnamed(&calls(&start), &end), vec![key(2), key(3)]);
    }

    #[test]
    fn growth_is_floored_a_new_entry_is_whole_and_a_plan_time_either_lacks_is_not_summed() {
        let before = StatementStats {
            rows: 10,
            exec_time_ms: 4.0,
            plan_time_ms: Some(1.0),
            shared_blks_hit: 9,
            ..entry("q", 5)
        };
        let mut after = StatementStats {
            key: key(1),
            rows: 30,
            exec_time_ms: 3.5,
            plan_time_ms: Some(2.5),
            shared_blks_hit: 12,
            ..entry("q", 9)
        };
        let grown = after.minus(&before);
        let counts = (grown.calls, grown.rows, grown.shared_blks_hit);
        assert_eq!(counts, (4, 20, 3));
        assert_eq!((grown.exec_time_ms, grown.plan_time_ms), (0.0, Some(1.5)));
        assert_eq!(grown.key, key(1));
        assert_eq!(after.minus(&StatementStats::default()), after);
        after = after.plus(&before);
        assert_eq!((after.calls, after.plan_time_ms), (14, Some(3.5)));
        assert_eq!(after.key, key(1));
        after = after.plus(&entry("q", 1));
        assert_eq!((after.calls, after.plan_time_ms), (15, None));
    }
}
