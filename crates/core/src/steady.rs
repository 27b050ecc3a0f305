//! Steady per-statement figures: each statement's rows and shared blocks per call over one
//! stretch of traffic (a warm-up slice, half a burst), and whether two stretches agree. A
//! prepared statement that switches from its custom plans to a generic plan keeps its
//! calls but changes its blocks per call (and, for a write, its rows): this is how the
//! switch is seen, before the window (the warm-up goes on) and inside it (the window is
//! measured again). Pure arithmetic; `measure` reads the counters.

use std::collections::{BTreeMap, BTreeSet};

pub use crate::report::model::Warmed;
use crate::report::model::notes::Note;
use crate::snapshot::{StatementKey, StatementStats};

/// Fewer calls than this in either stretch, and a statement's per-call figures are not
/// compared: one odd call would decide.
pub const MIN_CALLS: i64 = 3;
/// Two per-call figures agree when they differ by at most this share of the larger one...
pub const RELATIVE_TOLERANCE: f64 = 0.2;
/// ...or by at most this much (rows or blocks per call), whichever is larger: a statement
/// that touches 2 or 3 blocks by its parameter is not a plan change.
pub const ABSOLUTE_TOLERANCE: f64 = 1.0;

/// One statement's figures over one stretch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PerCall {
    pub calls: i64,
    pub rows: f64,
    /// Shared blocks hit plus read.
    pub blocks: f64,
}

/// Each statement's figures between two readings of pg_stat_statements; statements without
/// a call in between are left out.
pub fn per_call(
    before: &BTreeMap<StatementKey, StatementStats>,
    after: &BTreeMap<StatementKey, StatementStats>,
) -> BTreeMap<StatementKey, PerCall> {
    let mut out = BTreeMap::new();
    for (key, end) in after {
        let start = before.get(key);
        let calls = end.calls - start.map_or(0, |s| s.calls);
        if calls <= 0 {
            continue;
        }
        let rows = end.rows - start.map_or(0, |s| s.rows);
        let blocks = (end.shared_blks_hit + end.shared_blks_read)
            - start.map_or(0, |s| s.shared_blks_hit + s.shared_blks_read);
        out.insert(
            key.clone(),
            PerCall {
                calls,
                rows: rows as f64 / calls as f64,
                blocks: blocks as f64 / calls as f64,
            },
        );
    }
    out
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= ABSOLUTE_TOLERANCE.max(RELATIVE_TOLERANCE * a.abs().max(b.abs()))
}

/// True when both stretches' rows and blocks per call agree (see the tolerances), or when
/// either has too few calls to tell.
pub fn agree(a: &PerCall, b: &PerCall) -> bool {
    a.calls < MIN_CALLS
        || b.calls < MIN_CALLS
        || (close(a.rows, b.rows) && close(a.blocks, b.blocks))
}

/// A statement whose per-call figures differ between two stretches.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub key: StatementKey,
    pub first: PerCall,
    pub second: PerCall,
}

/// The statements run in both stretches whose figures disagree, the largest change in
/// blocks per call first.
pub fn changes(
    first: &BTreeMap<StatementKey, PerCall>,
    second: &BTreeMap<StatementKey, PerCall>,
) -> Vec<Change> {
    let mut out: Vec<Change> = (first.iter())
        .filter_map(|(key, a)| {
            let b = second.get(key)?;
            (!agree(a, b)).then(|| Change {
                key: key.clone(),
                first: *a,
                second: *b,
            })
        })
        .collect();
    out.sort_by(|x, y| {
        let size = |c: &Change| (c.second.blocks - c.first.blocks).abs();
        size(y).total_cmp(&size(x))
    });
    out
}

/// Whether two consecutive warm-up slices show a steady state: the same statements ran at
/// least [`MIN_CALLS`] times in both (one that appears only now is a code path still
/// warming up; a rare one, a cache refill, is not compared), and each one's figures agree.
pub fn steady(
    previous: &BTreeMap<StatementKey, PerCall>,
    slice: &BTreeMap<StatementKey, PerCall>,
) -> bool {
    let keys = |m: &BTreeMap<StatementKey, PerCall>| {
        (m.iter().filter(|(_, p)| p.calls >= MIN_CALLS))
            .map(|(k, _)| k.clone())
            .collect::<BTreeSet<_>>()
    };
    // Two slices without any statement: the endpoint does not query this database, and
    // there is nothing to settle. One empty slice beside a full one is a change.
    if previous.is_empty() && slice.is_empty() {
        return true;
    }
    !slice.is_empty() && keys(previous) == keys(slice) && changes(previous, slice).is_empty()
}

/// Executions of a prepared statement on one connection before Postgres may choose a
/// generic plan for it (`plancache.c` plans the first five custom).
pub const CUSTOM_PLAN_EXECUTIONS: u64 = 5;

/// The warm-up requests that give each of `connections` app connections one execution
/// past the custom plans, were the requests spread evenly.
pub fn requests_to_reach(connections: u64) -> u64 {
    connections * (CUSTOM_PLAN_EXECUTIONS + 1)
}

impl Warmed {
    /// The note when the cap stopped the warm-up before a steady state.
    pub fn note(&self) -> Option<Note> {
        (!self.steady).then_some(Note::WarmupNotSteady {
            requests: self.requests,
            seconds: self.seconds,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(queryid: i64) -> StatementKey {
        StatementKey {
            userid: 10,
            queryid,
            toplevel: Some(true),
        }
    }

    fn stats(calls: i64, rows: i64, hit: i64, read: i64) -> StatementStats {
        StatementStats {
            calls,
            rows,
            shared_blks_hit: hit,
            shared_blks_read: read,
            ..Default::default()
        }
    }

    fn pc(calls: i64, rows: f64, blocks: f64) -> PerCall {
        PerCall {
            calls,
            rows,
            blocks,
        }
    }

    #[test]
    fn per_call_divides_the_delta_and_skips_idle_statements() {
        let before = BTreeMap::from([(key(1), stats(10, 10, 30, 0)), (key(2), stats(5, 5, 5, 5))]);
        let after = BTreeMap::from([
            (key(1), stats(30, 30, 70, 20)),
            (key(2), stats(5, 5, 5, 5)),
            (key(3), stats(4, 8, 4, 0)),
        ]);
        let got = per_call(&before, &after);
        assert_eq!(got.len(), 2);
        assert_eq!(got[&key(1)], pc(20, 1.0, 3.0));
        assert_eq!(got[&key(3)], pc(4, 2.0, 1.0));
    }

    #[test]
    fn a_seq_scan_in_place_of_an_index_scan_is_a_change() {
        // Index scan: 3 blocks per call; generic plan: a seq scan of 55 pages.
        let first = BTreeMap::from([(key(1), pc(100, 1.0, 3.0)), (key(2), pc(100, 1.0, 2.0))]);
        let second = BTreeMap::from([(key(1), pc(100, 1.0, 29.0)), (key(2), pc(100, 1.0, 2.5))]);
        let got = changes(&first, &second);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].key, key(1));
        assert!(!steady(&first, &second));
    }

    #[test]
    fn small_noise_and_rare_statements_agree() {
        // 1 block apart, 20 % apart, and a change on 2 calls: none is a change.
        assert!(agree(&pc(50, 1.0, 2.0), &pc(50, 1.0, 3.0)));
        assert!(agree(&pc(50, 10.0, 100.0), &pc(50, 10.0, 120.0)));
        assert!(!agree(&pc(50, 10.0, 100.0), &pc(50, 10.0, 130.0)));
        assert!(agree(&pc(2, 1.0, 3.0), &pc(50, 1.0, 300.0)));
        assert!(!agree(&pc(50, 1.0, 3.0), &pc(50, 5.0, 3.0)));
    }

    #[test]
    fn steady_needs_the_same_statements_in_both_slices() {
        let a = BTreeMap::from([(key(1), pc(40, 1.0, 3.0))]);
        let b = BTreeMap::from([(key(1), pc(40, 1.0, 3.0)), (key(2), pc(4, 1.0, 1.0))]);
        assert!(!steady(&a, &b));
        assert!(steady(&a, &a.clone()));
        // No statement in either slice: nothing to settle. One empty beside one full: not yet.
        assert!(steady(&BTreeMap::new(), &BTreeMap::new()));
        assert!(!steady(&BTreeMap::new(), &a) && !steady(&a, &BTreeMap::new()));
    }

    #[test]
    fn largest_change_first() {
        let first = BTreeMap::from([(key(1), pc(10, 1.0, 3.0)), (key(2), pc(10, 1.0, 3.0))]);
        let second = BTreeMap::from([(key(1), pc(10, 1.0, 10.0)), (key(2), pc(10, 1.0, 60.0))]);
        let got = changes(&first, &second);
        assert_eq!(
            got.iter().map(|c| c.key.queryid).collect::<Vec<_>>(),
            [2, 1]
        );
    }

    #[test]
    fn six_executions_per_connection() {
        assert_eq!(requests_to_reach(8), 48);
        assert_eq!(requests_to_reach(0), 0);
    }
}
