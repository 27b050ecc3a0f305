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

pub use crate::report::model::odd_events::{
    EventKind, OddEvents, RareCost, RareFigure, RareWork, WindowSpread, describe,
};

use crate::delta::{StatementDelta, TableDelta, WindowDelta, per_request};
use crate::report::model::counters::{Counter, DatabaseCounters, TableCounters};
use crate::report::model::figure::Figure;
use crate::report::model::figures::Figures;
use crate::report::model::keyed::Keyed;
use crate::text::one_line;

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
    for (query, entries) in by_text(&window.statements) {
        let calls = entries.iter().map(|s| s.calls).sum();
        push(EventKind::Calls, &one_line(query, 80), calls, 0);
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

/// The part of `window` that its rare work did, to take out of the per-request figures:
/// each statement called only by the few requests (none per request otherwise) whole, and
/// the calls beyond a whole number per request of one every request makes; each table only
/// they scanned or wrote whole, and of a table every request touches, the scans, rows and
/// writes beyond a whole number per request; the transactions beyond a whole number per
/// request; the database's rows read, fetched and written as the sum of those tables', and
/// its blocks as those statements'. `Err` names what cannot be told apart exactly: fewer
/// events than the others (work skipped, not added), a catalog loaded, or a counter whose
/// excess over the requests is not rare.
pub fn rare_part(
    window: &WindowDelta,
    odd: &[OddEvents],
    requests: u64,
) -> Result<WindowDelta, String> {
    if let Some(catalog) = odd.iter().find(|o| o.kind == EventKind::CatalogScans) {
        return Err(format!("the catalog was loaded ({catalog})"));
    }
    let statements: Vec<Vec<StatementDelta>> = (by_text(&window.statements).into_iter())
        .map(|(_, entries)| rare_calls(&entries, requests))
        .collect::<Result<_, _>>()?;
    let tables: Vec<Option<TableDelta>> = (window.tables.iter())
        .map(|t| rare_table(t, requests))
        .collect::<Result<_, _>>()?;
    let mut rare = WindowDelta {
        statements: statements.into_iter().flatten().collect(),
        tables: tables.into_iter().flatten().collect(),
        ..WindowDelta::default()
    };
    let db = &window.database;
    let transactions = excess(
        db.xact_commit + db.xact_rollback,
        requests,
        "the transactions",
    )?;
    let tables =
        (rare.tables.iter()).fold(TableCounters::default(), |sum, t| sum.plus(&t.counters));
    let blocks = (rare.statements.iter()).fold((0, 0), |(hit, read), s| {
        (hit + s.shared_blks_hit, read + s.shared_blks_read)
    });
    rare.database = DatabaseCounters {
        xact_commit: transactions,
        tup_returned: tables.seq_tup_read + tables.idx_tup_read,
        tup_fetched: tables.idx_tup_fetch,
        tup_inserted: tables.n_tup_ins,
        tup_updated: tables.n_tup_upd,
        tup_deleted: tables.n_tup_del,
        blks_hit: blocks.0,
        blks_read: blocks.1,
        ..DatabaseCounters::default()
    };
    Ok(rare)
}

/// The excess of `total` over a whole number per request (0 for an exact multiple), when
/// it is a few; `of` names the counter otherwise.
fn excess(total: i64, requests: u64, of: &str) -> Result<i64, String> {
    match remainder(total, requests) {
        Some((_, events)) if events < 0 => Err(format!(
            "{of} fell {} short of a whole number per request",
            -events
        )),
        Some((_, events)) => Ok(events),
        None if total % i64::try_from(requests).unwrap_or(1).max(1) == 0 => Ok(0),
        None => Err(format!("{of} is not a whole number per request plus a few")),
    }
}

/// The statements by their text, in the order first seen: one statement's entries are
/// several where its query id changes from request to request (a temporary table made on
/// each request is a new relation every time), so its calls are counted together.
fn by_text(statements: &[StatementDelta]) -> Vec<(&str, Vec<&StatementDelta>)> {
    let mut out: Vec<(&str, Vec<&StatementDelta>)> = Vec::new();
    for statement in statements {
        match out.iter_mut().find(|(query, _)| *query == statement.query) {
            Some((_, entries)) => entries.push(statement),
            None => out.push((&statement.query, vec![statement])),
        }
    }
    out
}

/// The rare calls of one statement (its `entries`): all of them when the other requests
/// make none, those beyond a whole number per request otherwise, with their rows when every
/// call returned as many (set against its busiest entry).
fn rare_calls(entries: &[&StatementDelta], requests: u64) -> Result<Vec<StatementDelta>, String> {
    let (calls, rows) = (entries.iter()).fold((0, 0), |(c, r), s| (c + s.calls, r + s.rows));
    let Some(busiest) = entries.iter().max_by_key(|s| s.calls) else {
        return Ok(Vec::new());
    };
    let of = format!("the calls of {}", one_line(&busiest.query, 80));
    match remainder(calls, requests) {
        None => Ok(Vec::new()),
        Some((0, _)) => Ok(entries.iter().map(|s| (*s).clone()).collect()),
        Some(_) if rows % calls != 0 => {
            Err(format!("{of}: the rare calls' rows cannot be told apart"))
        }
        Some(_) => {
            let rare = excess(calls, requests, &of)?;
            Ok(vec![StatementDelta {
                key: busiest.key.clone(),
                query: busiest.query.clone(),
                calls: rare,
                rows: rows / calls * rare,
                ..StatementDelta::default()
            }])
        }
    }
}

/// The rare part of `table`: all of it when the other requests neither scan nor write it,
/// each counter's excess over a whole number per request otherwise; none without events.
fn rare_table(table: &TableDelta, requests: u64) -> Result<Option<TableDelta>, String> {
    let c = &table.counters;
    let events = [
        c.seq_scan,
        c.idx_scan,
        c.n_tup_ins,
        c.n_tup_upd,
        c.n_tup_del,
    ];
    let odd = events.map(|total| remainder(total, requests));
    if odd.iter().all(Option::is_none) {
        return Ok(None);
    }
    let only_rare = (odd.iter().zip(events))
        .all(|(o, total)| total == 0 || o.is_some_and(|(whole, _)| whole == 0));
    let beyond = |total: i64, counter: &str| {
        excess(total, requests, &format!("{counter} of {}", table.name))
    };
    let counters = match only_rare {
        true => c.clone(),
        false => TableCounters {
            seq_scan: beyond(c.seq_scan, "the sequential scans")?,
            seq_tup_read: beyond(c.seq_tup_read, "the rows read by sequential scans")?,
            idx_scan: beyond(c.idx_scan, "the index scans")?,
            idx_tup_fetch: beyond(c.idx_tup_fetch, "the rows fetched by index")?,
            idx_tup_read: beyond(c.idx_tup_read, "the index entries read")?,
            n_tup_ins: beyond(c.n_tup_ins, "the rows inserted")?,
            n_tup_upd: beyond(c.n_tup_upd, "the rows updated")?,
            n_tup_del: beyond(c.n_tup_del, "the rows deleted")?,
        },
    };
    Ok(Some(TableDelta {
        counters,
        ..table.clone()
    }))
}

/// What the `rare` part of a window of `seconds` cost: each figure's total, and per minute
/// ± one of the fewest events of one counter in `odd`, the times it came at the most (null
/// statement figures where no statement is in it: pg_stat_statements was not read).
pub fn rare_cost(rare: &WindowDelta, odd: &[OddEvents], seconds: f64) -> RareCost {
    let events = (odd.iter().map(|o| o.events.abs()).filter(|e| *e > 0).min()).unwrap_or(1);
    let figure = |total: i64| RareFigure::of(total, seconds.max(f64::MIN_POSITIVE), events);
    let top = rare
        .statements
        .iter()
        .filter(|s| s.key.toplevel != Some(false));
    let (calls, rows) = top.fold((0, 0), |(c, r), s| (c + s.calls, r + s.rows));
    let statements = !rare.statements.is_empty();
    let db = &rare.database;
    let total = |f: Figure| match f {
        Figure::Transactions => Some(db.xact_commit + db.xact_rollback),
        Figure::RowsRead => Some(db.tup_returned),
        Figure::Statements => statements.then_some(calls),
        Figure::RowsReturned => statements.then_some(rows),
        _ => None,
    };
    RareCost {
        window_seconds: seconds,
        events,
        figures: Keyed::from_fn(|f| total(f).map(figure)),
    }
}

/// `window` without its `rare` part: the counters of every request alone.
pub fn regular_part(window: &WindowDelta, rare: &WindowDelta) -> WindowDelta {
    let statements = (window.statements.iter())
        .filter_map(|s| match rare.statements.iter().find(|r| r.key == s.key) {
            Some(r) if r.calls == s.calls => None,
            Some(r) => Some(s.minus(r)),
            None => Some(s.clone()),
        })
        .collect();
    let tables = (window.tables.iter())
        .filter_map(|t| match rare.tables.iter().find(|r| r.name == t.name) {
            Some(r) if r.counters == t.counters => None,
            Some(r) => Some(TableDelta {
                counters: t.counters.minus(&r.counters),
                ..t.clone()
            }),
            None => Some(t.clone()),
        })
        .collect();
    WindowDelta {
        database: window.database.minus(&rare.database),
        statements,
        tables,
        ..window.clone()
    }
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
pub fn spread(windows: &[Figures]) -> WindowSpread {
    let half = |figure: Figure| -> Option<f64> {
        let values: Option<Vec<f64>> = (windows.iter()).map(|w| figure.of(w)).collect();
        let (min, max) = (values?.into_iter()).fold((f64::MAX, f64::MIN), |(min, max), v| {
            (min.min(v), max.max(v))
        });
        // No window: the range is negative, and the spread 0.
        Some(((max - min) / 2.0).max(0.0))
    };
    WindowSpread {
        figures: Keyed::from_fn(half),
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
    use crate::delta::TableDelta;
    use crate::report::model::counters::TableCounters;
    use crate::report::model::figure::PerFigure;

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
            per_figure: Keyed::new(PerFigure {
                transactions: Some(transactions),
                statements: Some(transactions),
                rows_read: Some(rows_read),
                ..PerFigure::default()
            }),
            ..Figures::default()
        };
        let apart = spread(&[f(1.02, 50.2), f(1.03, 50.31), f(1.02, 50.2)]);
        assert!(
            (apart.figures.transactions.unwrap() - 0.005).abs() < 1e-12,
            "{apart:?}"
        );
        assert!(
            (apart.figures.rows_read.unwrap() - 0.055).abs() < 1e-9,
            "{apart:?}"
        );
        assert_eq!(apart.figures.rows_returned, None);
        assert!(!apart.is_zero());
        assert!(spread(&[f(1.02, 50.2), f(1.02, 50.2)]).is_zero());
    }

    fn statement(queryid: i64, query: &str, calls: i64, rows: i64) -> StatementDelta {
        StatementDelta {
            key: crate::snapshot::StatementKey {
                userid: 10,
                queryid,
                toplevel: Some(true),
            },
            query: query.into(),
            calls,
            rows,
            shared_blks_hit: 3 * calls,
            ..Default::default()
        }
    }

    fn scanned(name: &str, idx_scan: i64, idx_tup_read: i64) -> TableDelta {
        table(
            name,
            TableCounters {
                idx_scan,
                idx_tup_read,
                idx_tup_fetch: idx_tup_read,
                ..Default::default()
            },
        )
    }

    /// The demo's cached pipeline, 200 requests: the session, the entitlement and a page of
    /// 20 projects on every request (30 rows read); the tenant and the permission looked
    /// up again by 7 requests racing past the cache's expiry (3 and 6 rows read each).
    fn cached_pipeline() -> WindowDelta {
        let mut window = WindowDelta {
            statements: vec![
                statement(1, "SELECT live FROM sessions", 200, 200),
                statement(2, "SELECT enabled FROM entitlements", 200, 200),
                statement(3, "SELECT id, name FROM projects", 200, 4000),
                statement(4, "SELECT id, status FROM tenants", 7, 7),
                statement(5, "SELECT EXISTS (memberships, grants)", 7, 7),
            ],
            tables: vec![
                scanned("public.sessions", 200, 200),
                scanned("public.entitlements", 200, 200),
                scanned("public.projects", 200, 5600),
                scanned("public.tenants", 7, 21),
                scanned("public.memberships", 7, 7),
                scanned("public.group_grants", 7, 35),
            ],
            ..Default::default()
        };
        window.database.xact_commit = 614;
        window.database.tup_returned = 6000 + 63;
        window.database.blks_hit = 5000;
        window
    }

    #[test]
    fn rare_work_in_tables_of_its_own_is_taken_out_whole() {
        let window = cached_pipeline();
        let odd = odd_events(&window, 200);
        let rare = rare_part(&window, &odd, 200).unwrap();
        assert_eq!(rare.database.xact_commit, 14);
        assert_eq!(rare.database.tup_returned, 63);
        assert_eq!(rare.database.blks_hit, 42, "the rare statements' blocks");
        let regular = regular_part(&window, &rare);
        assert_eq!(regular.database.xact_commit, 600);
        assert_eq!(regular.database.tup_returned, 6000);
        let calls: i64 = regular.statements.iter().map(|s| s.calls).sum();
        assert_eq!((regular.statements.len(), calls), (3, 600));
        let names: Vec<&str> = regular.tables.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            ["public.sessions", "public.entitlements", "public.projects"]
        );
        // 7 events in a 70 s window: 6 a minute, each figure ± one event's share.
        let cost = rare_cost(&rare, &odd, 70.0);
        assert_eq!(cost.events, 7);
        assert_eq!(cost.figures.transactions.unwrap().total, 14);
        assert!(
            (cost.figures.transactions.unwrap().per_minute - 12.0).abs() < 1e-9,
            "{cost:?}"
        );
        assert!(
            (cost.figures.transactions.unwrap().plus_minus_per_minute - 12.0 / 7.0).abs() < 1e-9
        );
        assert_eq!(cost.figures.statements.map(|f| f.total), Some(14));
        assert_eq!(cost.figures.rows_read.unwrap().total, 63);
        assert_eq!(cost.figures.rows_returned.map(|f| f.total), Some(14));
        assert_eq!(
            cost.text(),
            "12.0 ± 1.7 transactions, 12.0 ± 1.7 statements, 54.0 ± 7.7 rows read and \
             12.0 ± 1.7 rows returned a minute"
        );
    }

    #[test]
    fn a_statement_whose_id_changes_on_every_request_is_counted_by_its_text() {
        // A temporary table made on each request is a new relation each time: its INSERT
        // has a new query id, and pg_stat_statements an entry of 1 call, per request.
        let insert = "INSERT INTO staging SELECT g FROM generate_series($1, $2) g";
        let mut window = WindowDelta {
            statements: (0..200)
                .map(|i| statement(100 + i, insert, 1, 2000))
                .collect(),
            ..Default::default()
        };
        window.database.xact_commit = 200;
        assert!(odd_events(&window, 200).is_empty());
        // With two touches beside it, only the touches are rare.
        window
            .statements
            .push(statement(1, "UPDATE tokens SET last_used = now()", 2, 2));
        window.database.xact_commit = 202;
        let odd = odd_events(&window, 200);
        assert_eq!(odd.len(), 2, "{odd:?}");
        let rare = rare_part(&window, &odd, 200).unwrap();
        assert_eq!(rare.statements.len(), 1);
        assert_eq!(regular_part(&window, &rare).statements.len(), 200);
    }

    #[test]
    fn rare_work_on_a_table_every_request_reads_is_its_excess() {
        // A token read on every request, and touched (an UPDATE by its key) twice.
        let mut window = WindowDelta {
            statements: vec![
                statement(1, "SELECT user_id FROM tokens", 200, 200),
                statement(2, "UPDATE tokens SET last_used = now()", 2, 2),
            ],
            tables: vec![table(
                "public.tokens",
                TableCounters {
                    idx_scan: 202,
                    idx_tup_read: 202,
                    idx_tup_fetch: 202,
                    n_tup_upd: 2,
                    ..Default::default()
                },
            )],
            ..Default::default()
        };
        window.database.xact_commit = 202;
        window.database.tup_returned = 202;
        window.database.tup_updated = 2;
        let odd = odd_events(&window, 200);
        let rare = rare_part(&window, &odd, 200).unwrap();
        let regular = regular_part(&window, &rare);
        assert_eq!(regular.database.xact_commit, 200);
        assert_eq!(regular.database.tup_returned, 200);
        assert_eq!(regular.database.tup_updated, 0);
        assert_eq!(regular.statements.len(), 1);
        assert_eq!(regular.tables[0].counters.idx_scan, 200);
        assert_eq!(regular.tables[0].counters.n_tup_upd, 0);
    }

    #[test]
    fn rare_work_that_cannot_be_told_apart_is_an_error() {
        // Three rare scans of a table every request scans once, 300 rows each: the excess
        // of rows read over a whole number per request is no longer a few.
        let mut window = WindowDelta {
            tables: vec![scanned("public.grants", 203, 200 + 900)],
            ..Default::default()
        };
        window.database.xact_commit = 203;
        let why = rare_part(&window, &odd_events(&window, 200), 200).unwrap_err();
        assert!(
            why.contains("of public.grants is not a whole number"),
            "{why}"
        );
        // Fewer events than the others: work skipped, not added.
        window.tables = vec![scanned("public.grants", 198, 198)];
        window.database.xact_commit = 200;
        let why = rare_part(&window, &odd_events(&window, 200), 200).unwrap_err();
        assert!(why.contains("2 short"), "{why}");
        // A catalog loaded in the window: its rows are in rows read, and not in a table.
        let catalog = [odd(EventKind::CatalogScans, "pg_class_oid_index", 3)];
        assert!(rare_part(&cached_pipeline(), &catalog, 200).is_err());
    }

    #[test]
    fn statements_and_transactions_are_counted_too() {
        let mut window = WindowDelta::default();
        window.database.xact_commit = 201;
        window.statements.push(crate::delta::StatementDelta {
            key: crate::snapshot::StatementKey {
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
