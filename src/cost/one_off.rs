//! One-offs inside a window: events that a few of the requests had and the others did not.
//! A deterministic endpoint moves each event counter (a table's scans and written rows, a
//! statement's calls, the transactions) by the same whole number on every request, so its
//! total is that number times the requests. A plan switch on one pooled connection, an
//! ANALYZE, a cache refilled once, or a backend that was not warm leave a few events more
//! or fewer: a small remainder, `2 seq scans in 200 requests`. A remainder near half the
//! requests or more is the app's own mix (a cache refilled in 63% of requests, a page that
//! alternates between two shapes), not a one-off.
//!
//! The system catalogs are read the same way, but any remainder counts there: a warm
//! backend serving the same requests scans no catalog, so catalog scans that are not the
//! same on every request are caches being loaded (a connection born after the warm-up, an
//! invalidation after ANALYZE or DDL). Pure arithmetic; `measure` measures a window with
//! one-offs again, and reads a remainder that comes back the same as the app's.

use std::collections::BTreeMap;

pub use crate::cost::odd_events::{EventKind, OddEvents, RareWork, Spread, describe};

use crate::cost::delta::{WindowDelta, per_request};
use crate::cost::report::model::figure::Figure;
use crate::cost::report::model::figures::Figures;
use crate::cost::text::one_line;

/// A remainder of at most this share of the requests (and at least one event) is rare
/// enough to be a one-off; more is the app's own mix of requests.
pub const RARE_SHARE: f64 = 0.1;

/// The whole number per request and the remainder of `total` over `requests`, when the
/// remainder is rare (see [`RARE_SHARE`]); `None` for an exact multiple or a mix.
pub fn remainder(total: i64, requests: u64) -> Option<(i64, i64)> {
    let n = i64::try_from(requests).ok().filter(|n| *n > 0)?;
    let whole = (2 * total + n).div_euclid(2 * n);
    let events = total - whole * n;
    let limit = ((RARE_SHARE * n as f64).floor() as i64).max(1);
    (events != 0 && events.abs() <= limit).then_some((whole, events))
}

/// Every counter of `window` with a rare remainder over `requests`, tables first.
pub fn odd_events(window: &WindowDelta, requests: u64) -> Vec<OddEvents> {
    let mut out = Vec::new();
    let mut push = |kind: EventKind, of: &str, total: i64, rows: i64| {
        if let Some((whole, events)) = remainder(total, requests) {
            let every_one_odd = whole == 0 && events > 0;
            out.push(OddEvents {
                kind,
                of: of.to_string(),
                whole_per_request: whole,
                events,
                rows: every_one_odd.then_some(rows),
            });
        }
    };
    for table in &window.tables {
        let c = &table.counters;
        push(EventKind::SeqScan, &table.name, c.seq_scan, c.seq_tup_read);
        push(EventKind::IdxScan, &table.name, c.idx_scan, c.idx_tup_fetch);
        push(EventKind::RowsInserted, &table.name, c.n_tup_ins, 0);
        push(EventKind::RowsUpdated, &table.name, c.n_tup_upd, 0);
        push(EventKind::RowsDeleted, &table.name, c.n_tup_del, 0);
    }
    for statement in &window.statements {
        push(
            EventKind::Calls,
            &one_line(&statement.query, 80),
            statement.calls,
            0,
        );
    }
    let db = &window.database;
    push(
        EventKind::Transactions,
        "",
        db.xact_commit + db.xact_rollback,
        0,
    );
    for odd in &mut out {
        if !matches!(odd.kind, EventKind::SeqScan | EventKind::IdxScan) {
            odd.rows = None;
        }
    }
    out
}

/// The scans of each system catalog relation at one boundary, by oid: `closes` read before
/// pgcost's own reads there (it closes the window before), `opens` after them, once they
/// are published (it opens the window after). The window between two boundaries is then
/// the app's alone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CatalogRead {
    pub closes: BTreeMap<u32, i64>,
    pub opens: BTreeMap<u32, i64>,
}

/// The catalog relations scanned a number of times over the window (`opened.opens` to
/// `closed.closes`) that is not the same on every request, among those `names` names (the
/// database's own catalogs: a shared catalog's scans are the whole cluster's).
pub fn odd_catalog_scans(
    opened: &CatalogRead,
    closed: &CatalogRead,
    names: &BTreeMap<u32, String>,
    requests: u64,
) -> Vec<OddEvents> {
    let n = i64::try_from(requests).unwrap_or(0);
    if n == 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (oid, after) in &closed.closes {
        let total = after - opened.opens.get(oid).copied().unwrap_or(0);
        let Some(name) = names.get(oid).cloned() else {
            continue;
        };
        if total <= 0 || total % n == 0 {
            continue;
        }
        out.push(OddEvents {
            kind: EventKind::CatalogScans,
            of: name,
            whole_per_request: total / n,
            events: total % n,
            rows: None,
        });
    }
    out
}

/// True when the one-offs of the windows measured within `--retries` (each had some) are
/// the app's own rare work: the last two windows had events in the same counters. A plan
/// switch or a cache loaded once does not come back in the next window; an earlier window
/// may hold such a one-off beside the rare work (the rare path's first run, cold).
pub fn apps_own(windows: &[Vec<OddEvents>]) -> bool {
    match windows {
        [.., before, last] => same_counters(before, last),
        _ => false,
    }
}

/// How far apart the windows' figures were: half the range of each over `windows`, by
/// the figure table's reading.
pub fn spread(windows: &[Figures]) -> Spread {
    let half = |figure: Figure| -> Option<f64> {
        let values: Option<Vec<f64>> = (windows.iter()).map(|w| figure.of(w)).collect();
        let (min, max) = (values?.into_iter()).fold((f64::MAX, f64::MIN), |(min, max), v| {
            (min.min(v), max.max(v))
        });
        // No window: the range is negative, and the spread 0.
        Some(((max - min) / 2.0).max(0.0))
    };
    Spread {
        transactions: half(Figure::Transactions).unwrap_or(0.0),
        statements: half(Figure::Statements),
        rows_read: half(Figure::RowsRead).unwrap_or(0.0),
        rows_returned: half(Figure::RowsReturned),
    }
}

/// True when two windows' odd events moved the same counters (each kind of event of the
/// same table, statement or catalog), however many events each had.
pub fn same_counters(a: &[OddEvents], b: &[OddEvents]) -> bool {
    let counters = |odd: &[OddEvents]| {
        let mut keys: Vec<(EventKind, String)> =
            odd.iter().map(|o| (o.kind.clone(), o.of.clone())).collect();
        keys.sort();
        keys
    };
    counters(a) == counters(b)
}

/// How often rare work came, per minute, over `windows` (each window's events and its
/// seconds): the most events of one counter in each window, summed, over their seconds.
/// `None` without a window or without time.
pub fn per_minute(windows: &[(&[OddEvents], f64)]) -> Option<f64> {
    let seconds: f64 = windows.iter().map(|(_, s)| s).sum();
    let events: i64 = (windows.iter())
        .map(|(odd, _)| odd.iter().map(|o| o.events.abs()).max().unwrap_or(0))
        .sum();
    (seconds > 0.0).then(|| events as f64 * 60.0 / seconds)
}

/// Rows the odd scans read per request, where known: the part of the rows read figure that
/// the one-offs account for.
pub fn rows_per_request(odd: &[OddEvents], requests: u64) -> f64 {
    let rows: i64 = odd.iter().filter_map(|o| o.rows).sum();
    per_request(rows, requests)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::counters::TableCounters;
    use crate::cost::delta::TableDelta;
    use crate::cost::report::model::figure::PerFigure;

    #[test]
    fn rare_work_comes_at_its_rate_per_minute_of_the_windows() {
        let touch = |events| OddEvents {
            kind: EventKind::RowsUpdated,
            of: "public.authtoken_token".into(),
            whole_per_request: 0,
            events,
            rows: None,
        };
        let calls = OddEvents {
            kind: EventKind::Calls,
            events: 1,
            ..touch(1)
        };
        // One touch in a 20 s window (its UPDATE's call and row), two racing in a 40 s one:
        // the most events of one counter, 1 + 2, over 60 s.
        let (one, two) = ([touch(1), calls.clone()], [touch(2), calls]);
        assert_eq!(per_minute(&[(&one, 20.0), (&two, 40.0)]), Some(3.0));
        assert_eq!(per_minute(&[]), None);
    }

    #[test]
    fn a_rare_remainder_is_a_one_off_and_a_mix_is_not() {
        assert_eq!(remainder(400, 200), None, "exact");
        assert_eq!(remainder(1, 200), Some((0, 1)));
        assert_eq!(remainder(399, 200), Some((2, -1)));
        assert_eq!(remainder(420, 200), Some((2, 20)), "10% is still rare");
        assert_eq!(remainder(421, 200), None);
        assert_eq!(
            remainder(126, 200),
            None,
            "a cache refilled in 63% of requests"
        );
        assert_eq!(remainder(500, 200), None, "2.5 per request: half and half");
        assert_eq!(remainder(1, 5), Some((0, 1)), "one event in few requests");
        assert_eq!(remainder(3, 0), None);
    }

    fn table(name: &str, counters: TableCounters) -> TableDelta {
        TableDelta {
            name: name.into(),
            counters,
            relpages: 10,
            n_live_tup: 1440,
        }
    }

    #[test]
    fn a_seq_scan_in_place_of_an_index_scan_on_one_request() {
        // The demo's `exists` pipeline on a loaded machine: one custom plan in 400 calls.
        let window = WindowDelta {
            tables: vec![
                table(
                    "public.group_grants",
                    TableCounters {
                        seq_scan: 1,
                        seq_tup_read: 863,
                        idx_scan: 399,
                        idx_tup_fetch: 399,
                        idx_tup_read: 0,
                        ..Default::default()
                    },
                ),
                table(
                    "public.projects",
                    TableCounters {
                        idx_scan: 200,
                        idx_tup_fetch: 4000,
                        idx_tup_read: 0,
                        ..Default::default()
                    },
                ),
            ],
            ..Default::default()
        };
        let odd = odd_events(&window, 200);
        assert_eq!(odd.len(), 2, "{odd:?}");
        assert_eq!(odd[0].kind, EventKind::SeqScan);
        assert_eq!((odd[0].whole_per_request, odd[0].events), (0, 1));
        assert_eq!(odd[0].rows, Some(863));
        assert_eq!((odd[1].whole_per_request, odd[1].events), (2, -1));
        assert_eq!(odd[1].rows, None);
        assert!((rows_per_request(&odd, 200) - 4.315).abs() < 1e-9);
        assert_eq!(
            describe(&odd, 200),
            "1 sequential scan(s) of public.group_grants more than 0 per request (863 rows); \
             1 index scan(s) of public.group_grants fewer than 2 per request in 200 requests"
        );
    }

    #[test]
    fn any_catalog_scan_not_the_same_on_every_request_is_odd() {
        let names = BTreeMap::from([
            (2662, "pg_class_oid_index".to_string()),
            (2663, "pg_class_relname_nsp_index".to_string()),
        ]);
        let opened = CatalogRead {
            closes: BTreeMap::new(),
            opens: BTreeMap::from([(2662, 100), (2663, 7)]),
        };
        let closed = |class: i64, other: i64| CatalogRead {
            closes: BTreeMap::from([(2662, class), (2663, other)]),
            opens: BTreeMap::new(),
        };
        // 40 requests on warm backends: no catalog scan, or one on each request.
        assert!(odd_catalog_scans(&opened, &closed(100, 7), &names, 40).is_empty());
        assert!(odd_catalog_scans(&opened, &closed(140, 7), &names, 40).is_empty());
        // A backend born after the warm-up loads its caches: 23 scans in 40 requests.
        let odd = odd_catalog_scans(&opened, &closed(123, 9), &names, 40);
        assert_eq!(odd.len(), 2);
        assert_eq!(
            odd[0].to_string(),
            "23 catalog scan(s) of pg_class_oid_index more than 0 per request"
        );
        assert_eq!(odd[1].of, "pg_class_relname_nsp_index");
        // A shared catalog (not named): the whole cluster's scans.
        let shared = CatalogRead {
            closes: BTreeMap::from([(1260, 15)]),
            opens: BTreeMap::new(),
        };
        assert!(odd_catalog_scans(&CatalogRead::default(), &shared, &names, 40).is_empty());
    }

    fn odd(kind: EventKind, of: &str, events: i64) -> OddEvents {
        OddEvents {
            kind,
            of: of.into(),
            whole_per_request: 0,
            events,
            rows: None,
        }
    }

    #[test]
    fn the_apps_own_rare_work_comes_back_in_every_window() {
        let touch = |n| vec![odd(EventKind::RowsUpdated, "public.tokens", n)];
        let switch = vec![odd(EventKind::SeqScan, "public.grants", 1)];
        assert!(apps_own(&[touch(1), touch(2), touch(1)]), "counts may vary");
        assert!(!apps_own(&[touch(1)]), "one window tells nothing");
        assert!(!apps_own(&[switch.clone(), touch(1)]));
        assert!(!apps_own(&[touch(1), switch.clone(), touch(1)]));
        let both = [touch(1), switch].concat();
        assert!(
            !apps_own(&[both, touch(1)]),
            "an extra counter in one window"
        );
    }

    #[test]
    fn the_spread_is_half_the_range_of_each_figure() {
        let f = |transactions: f64, rows_read: f64| Figures {
            per_figure: PerFigure {
                transactions: Some(transactions),
                statements: Some(transactions),
                rows_read: Some(rows_read),
                ..PerFigure::default()
            },
            ..Figures::default()
        };
        let apart = spread(&[f(1.02, 50.2), f(1.03, 50.31), f(1.02, 50.2)]);
        assert!((apart.transactions - 0.005).abs() < 1e-12, "{apart:?}");
        assert!((apart.rows_read - 0.055).abs() < 1e-9, "{apart:?}");
        assert_eq!(apart.rows_returned, None);
        assert!(!apart.is_zero());
        assert!(spread(&[f(1.02, 50.2), f(1.02, 50.2)]).is_zero());
    }

    #[test]
    fn statements_and_transactions_are_counted_too() {
        let mut window = WindowDelta::default();
        window.database.xact_commit = 201;
        window.statements.push(crate::cost::delta::StatementDelta {
            key: crate::cost::snapshot::StatementKey {
                userid: 10,
                queryid: 1,
                toplevel: Some(true),
            },
            query: "SELECT refill()".into(),
            calls: 2,
            rows: 2,
            exec_time_ms: 0.0,
            plan_time_ms: None,
            shared_blks_hit: 0,
            shared_blks_read: 0,
            writes: Default::default(),
        });
        let odd = odd_events(&window, 200);
        let kinds: Vec<_> = odd.iter().map(|o| (o.kind.clone(), o.events)).collect();
        assert_eq!(
            kinds,
            vec![(EventKind::Calls, 2), (EventKind::Transactions, 1)]
        );
        assert_eq!(odd[0].rows, None, "rows are a scan's");
    }
}
