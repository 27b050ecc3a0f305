//! The scale model on hand-built points: exact lines give exact slopes, a statement absent
//! at a size counts 0 calls there, and the findings fire on the loop and the growing scan,
//! never on the page or its count.

use super::*;
use crate::delta::{DatabaseDelta, TableDelta, WindowDelta};
use crate::report::model::counters::TableCounters;
use crate::report::tests::{context, load, stmt};

const REQUESTS: i64 = 100;
const PAGE: &str = "SELECT id, name FROM items ORDER BY id LIMIT $1";
const COUNT: &str = "SELECT count(*) FROM items";
const LOOP: &str = "SELECT tag FROM tags WHERE item_id = $1";

/// A page of `n` items, its count, then one lookup per item (none at n = 0), over
/// `REQUESTS` requests. Each lookup reads `read_per_lookup` rows of `tags`.
fn point(n: i64, read_per_lookup: i64) -> (u64, Report) {
    let mut statements = vec![
        stmt(1, PAGE, REQUESTS, REQUESTS * n),
        stmt(2, COUNT, REQUESTS, REQUESTS),
    ];
    if n > 0 {
        statements.push(stmt(3, LOOP, REQUESTS * n, REQUESTS * n));
    }
    let lookups = REQUESTS * n * read_per_lookup;
    let delta = WindowDelta {
        database: DatabaseDelta {
            xact_commit: REQUESTS * (2 + n),
            tup_returned: REQUESTS * (n + 1000) + lookups,
            sessions: Some(0),
            ..Default::default()
        },
        statements,
        tables: vec![
            TableDelta {
                name: "public.items".into(),
                counters: TableCounters {
                    seq_scan: REQUESTS,
                    seq_tup_read: REQUESTS * 1000,
                    idx_scan: REQUESTS,
                    idx_tup_fetch: REQUESTS * n,
                    idx_tup_read: 0,
                    ..Default::default()
                },
                relpages: 10,
                n_live_tup: 1000,
            },
            TableDelta {
                name: "public.tags".into(),
                counters: TableCounters {
                    seq_tup_read: lookups,
                    ..Default::default()
                },
                relpages: 10,
                n_live_tup: 1000,
            },
        ],
        ..Default::default()
    };
    let requests = REQUESTS as u64;
    let report = Report::build(
        &delta,
        &load(requests, &[(200, requests)]),
        context(requests),
    );
    (n as u64, report)
}

fn template() -> Template {
    Template {
        method: "GET".into(),
        url: "http://127.0.0.1:1/items?limit={n}".into(),
        param: "n".into(),
    }
}

fn statement<'a>(report: &'a ScaleReport, query: &str) -> &'a StatementGrowth {
    (report.statements.iter())
        .find(|s| s.query == query)
        .unwrap_or_else(|| panic!("no {query} in {:?}", report.statements))
}

#[test]
fn a_loop_has_slope_one_and_the_page_and_count_slope_zero() {
    let points = [point(0, 1), point(5, 1), point(10, 1), point(20, 1)];
    let report = build(template(), &points);
    assert!(report.valid);
    let looped = statement(&report, LOOP);
    assert_eq!(looped.calls_per_request, [0.0, 5.0, 10.0, 20.0]);
    assert!((looped.fit.slope - 1.0).abs() < 1e-12, "{looped:?}");
    assert!(looped.fit.intercept.abs() < 1e-12, "{looped:?}");
    assert_eq!(looped.fit.r2, 1.0);
    for flat in [PAGE, COUNT] {
        let s = statement(&report, flat);
        assert_eq!(s.calls_per_request, [1.0; 4]);
        assert_eq!((s.fit.slope, s.fit.intercept, s.fit.r2), (0.0, 1.0, 1.0));
    }
    assert_eq!(report.statements[0].query, LOOP, "steepest first");
    let statements = report.per_request.statements.unwrap();
    assert!((statements.slope - 1.0).abs() < 1e-12);
    assert!((statements.intercept - 2.0).abs() < 1e-12);
    // Rows returned: n (page) + 1 (count) + n (lookups); rows read: n + 1000 + n.
    let returned = report.per_request.rows_returned.unwrap();
    assert!((returned.slope - 2.0).abs() < 1e-12, "{returned:?}");
    let read = report.per_request.rows_read.unwrap();
    assert!((read.slope - 2.0).abs() < 1e-12, "{read:?}");
    assert!((read.intercept - 1000.0).abs() < 1e-9, "{read:?}");
}

#[test]
fn the_loop_is_an_n_plus_one_with_its_slope_and_nothing_else_fires() {
    let report = build(template(), &[point(5, 1), point(10, 1), point(20, 1)]);
    let kinds: Vec<_> = report.findings.iter().map(|f| f.kind).collect();
    assert_eq!(kinds, [FindingKind::NPlusOne]);
    let f = &report.findings[0];
    assert_eq!(f.query.as_deref(), Some(LOOP));
    assert!((f.evidence["slope"] - 1.0).abs() < 1e-12);
    assert_eq!(f.evidence["r2"], 1.0);
    assert_eq!(f.evidence["largest_n"], 20.0);
    assert_eq!(f.saves_per_request.statements, 19.0);
}

#[test]
fn the_loop_carries_the_tags_its_statement_was_sent_with_at_the_largest_point() {
    use crate::tags::seen_always;
    let tags = seen_always("/items", "app/items.rb", 7, 4);
    let mut points = [point(5, 1), point(10, 1), point(20, 1)];
    let last = &mut points[2].1;
    let loop_ = last
        .statements
        .iter_mut()
        .find(|s| s.query == LOOP)
        .unwrap();
    loop_.tags = Some(tags.clone());
    let report = build(template(), &points);
    let f = &report.findings[0];
    assert_eq!(f.tags.as_ref(), Some(&tags));
    assert_eq!(f.locations.len(), 1);
    assert_eq!(
        (f.locations[0].uri.as_str(), f.locations[0].line),
        ("app/items.rb", 7)
    );
}

#[test]
fn a_slope_under_half_a_call_per_item_is_no_loop() {
    // A lookup every other item: 0.4 per unit of n.
    let mut points = vec![point(5, 1), point(10, 1), point(20, 1)];
    for (n, report) in &mut points {
        for s in &mut report.statements {
            if s.query == LOOP {
                s.calls_per_request = 0.4 * *n as f64;
            }
        }
    }
    let report = build(template(), &points);
    assert!((statement(&report, LOOP).fit.slope - 0.4).abs() < 1e-12);
    assert!(report.findings.is_empty(), "{:?}", report.findings);
}

#[test]
fn lookups_that_scan_a_table_grow_the_rows_read_and_name_the_table() {
    // Each lookup scans 50 rows of tags: rows read grow by 1 (the page) + 50 per item,
    // rows returned by 2.
    let report = build(template(), &[point(5, 50), point(10, 50), point(20, 50)]);
    let kinds: Vec<_> = report.findings.iter().map(|f| f.kind).collect();
    assert!(kinds.contains(&FindingKind::ScanGrowsWithPage), "{kinds:?}");
    let f = (report.findings.iter())
        .find(|f| f.kind == FindingKind::ScanGrowsWithPage)
        .unwrap();
    assert_eq!(f.table.as_deref(), Some("public.tags"));
    assert!((f.evidence["rows_read_slope"] - 51.0).abs() < 1e-9, "{f:?}");
    assert!(
        (f.evidence["rows_returned_slope"] - 2.0).abs() < 1e-9,
        "{f:?}"
    );
    assert!((f.evidence["ratio"] - 25.5).abs() < 1e-9, "{f:?}");
    assert_eq!(report.tables[0].table, "public.tags");
    assert!((report.tables[0].fit.slope - 50.0).abs() < 1e-9);
    let items = &report.tables[1];
    assert_eq!(items.rows_read_per_request, [1005.0, 1010.0, 1020.0]);
    assert!((items.fit.slope - 1.0).abs() < 1e-12);
}

#[test]
fn an_invalid_point_makes_the_document_invalid_and_says_which() {
    let mut points = vec![point(5, 1), point(10, 1)];
    points[1].1.valid = false;
    let interrupted = crate::report::model::invalid::Invalid::new(
        crate::report::model::invalid::Code::Interrupted,
        "the burst was interrupted",
    );
    points[1].1.invalid_reasons = vec![interrupted];
    let report = build(template(), &points);
    assert!(!report.valid);
    assert_eq!(
        report.invalid_reasons,
        [crate::report::model::invalid::Invalid::new(
            crate::report::model::invalid::Code::Interrupted,
            "n = 10: the burst was interrupted"
        )]
    );
    assert_eq!(report.points.len(), 2);
    assert!(!report.points[1].valid);
}
