//! The survey's Markdown and HTML views on a hand-built ranking: two ranked routes, one
//! static by statements and one rejected; a skipped POST, unparsed lines and a finding.

use std::collections::BTreeMap;

use crate::render::format::Format;
use crate::render::html::tests::{external_references, outline};
use crate::render::view::View;
use pgcost_core::survey::input::Unparsed;
use pgcost_core::survey::replay::CredentialUsed;
use pgcost_core::survey::replay::Expectation;
use pgcost_core::survey::routes::{Skipped, UrlCount};
use pgcost_core::survey::{Measured, RouteInput, SurveyTraffic, rank};

fn urls(list: &[(&str, u64)]) -> Vec<UrlCount> {
    (list.iter())
        .map(|(url, requests)| UrlCount {
            url: url.to_string(),
            requests: *requests,
            body: None,
            logged_status: None,
        })
        .collect()
}

fn measured(statements: f64, rows_read: f64, db_time_ms: f64) -> Measured {
    let mut per_request = crate::render::tests::sample().per_request;
    per_request.statements = Some(statements);
    per_request.rows_read = rows_read;
    per_request.db_time_ms = Some(db_time_ms);
    Measured {
        valid: true,
        invalid_reasons: Vec::new(),
        per_request: Some(per_request),
        findings: Vec::new(),
        statements: Vec::new(),
        screened: None,
    }
}

/// A route screened only: pg_stat_statements' figures, no exact window.
fn screened(statements: f64, blocks: f64, db_time_ms: f64) -> Measured {
    Measured {
        valid: true,
        invalid_reasons: Vec::new(),
        per_request: None,
        findings: Vec::new(),
        statements: Vec::new(),
        screened: Some(pgcost_core::survey::screen::Screened {
            statements,
            rows_returned: 1.0,
            blocks,
            db_time_ms,
        }),
    }
}

fn route(route: &str, list: &[(&str, u64)], measured: Measured) -> RouteInput {
    RouteInput {
        method: "GET".into(),
        route: route.into(),
        urls: urls(list),
        sample: urls(list),
        credential: None,
        measured,
    }
}

pub(crate) fn survey() -> pgcost_core::survey::SurveyReport {
    let mut items = measured(21.0, 60.0, 2.5);
    items.findings = crate::render::tests::sample().findings;
    items.findings.truncate(1);
    let mut scan = route("/scan", &[("/scan", 4)], measured(1.0, 500.0, 1.5));
    scan.credential = Some(CredentialUsed {
        index: 1,
        paths: vec!["/scan".into(), "/search".into()],
    });
    let routes = vec![
        route("/items/{id}", &[("/items/7", 3), ("/items/12", 1)], items),
        scan,
        route("/health", &[("/health", 8)], measured(0.0, 0.0, 0.0)),
        route(
            "/forbidden",
            &[("/forbidden", 2)],
            Measured::not_measured(
                Expectation::default().probe_rejected(&BTreeMap::from([(403, 2)])),
            ),
        ),
    ];
    let traffic = SurveyTraffic {
        base_url: "http://127.0.0.1:3000".into(),
        parsed_requests: 22,
        unparsed_lines: 1,
        first_unparsed: vec![Unparsed {
            file: "access.log".into(),
            line: 13,
            text: "this is not a log line".into(),
        }],
        static_requests: 3,
        skipped: vec![Skipped {
            method: "POST".into(),
            route: "/write".into(),
            requests: 1,
            reason: "not replayed: POST changes data (--allow-method POST replays it)".into(),
        }],
        static_files: vec![Skipped {
            method: "GET".into(),
            route: "/assets/*.css".into(),
            requests: 3,
            reason: pgcost_core::survey::routes::STATIC_REASON.into(),
        }],
        warnings: Vec::new(),
        production: None,
    };
    rank::rank(routes, traffic)
}

#[test]
fn markdown_ranks_counts_and_lists_findings() {
    let report = survey();
    let text = report.render(Format::Markdown).unwrap();
    // Db time: 4 × 2.5 = 10 against 4 × 1.5 = 6; rows read: 240 against 2000.
    let items = (text.lines())
        .find(|l| l.contains("/items/{id}") && l.starts_with('|'))
        .unwrap();
    for cell in [
        "| 1 ", "| 21.00 ", "| 60.00 ", "| 62.5% ", "| 10.7% ", "| yes ",
    ] {
        assert!(items.contains(cell), "{cell} in {items}");
    }
    let health = (text.lines()).find(|l| l.contains("/health")).unwrap();
    assert!(health.contains("static (no statement)"), "{health}");
    assert!(text.contains("static requests: **11**"), "{text}");
    assert!(text.contains("403 x2"), "{text}");
    let scan = (text.lines()).find(|l| l.contains("/scan")).unwrap();
    assert!(scan.contains("| #1 /scan "), "{scan}");
    let finding = &report.routes[0].findings[0];
    let saving = finding.saves_per_request.describe();
    let head = format!("- **{} ({}): {saving}**", finding.kind, finding.severity);
    assert!(text.contains(&head), "{head} in {text}");
    insta::assert_snapshot!("survey_markdown", text);
}

#[test]
fn html_charts_the_shares_of_the_ranked_routes() {
    let report = survey();
    let html = report.render(Format::Html).unwrap();
    let page = html.replace(&report.base_url, "");
    assert_eq!(external_references(&page), Vec::<String>::new());
    assert_eq!(html.matches("<svg").count(), 1, "one chart");
    let chart = &html[html.find("<figure").unwrap()..html.find("</figure>").unwrap()];
    // Only the ranked routes are charted, with their shares in percent.
    for text in [
        ">GET /items/{id}<",
        ">GET /scan<",
        ">62.5<",
        ">10.7<",
        ">37.5<",
    ] {
        assert!(chart.contains(text), "{text} missing: {chart}");
    }
    assert!(!chart.contains("/health") && !chart.contains("/forbidden"));
    assert!(html.contains("NOT VALID"), "the rejected route");
    insta::assert_snapshot!("survey_html_outline", outline(&html));
}

#[test]
fn a_screened_route_is_marked_and_its_figures_explained() {
    let routes = vec![
        route("/items/{id}", &[("/items/7", 4)], measured(2.0, 60.0, 2.0)),
        route("/search", &[("/search", 4)], screened(3.0, 12.0, 0.5)),
    ];
    let report = rank::rank(routes, SurveyTraffic::default());
    let text = report.render(Format::Markdown).unwrap();
    let search = (text.lines())
        .find(|l| l.contains("/search") && l.starts_with('|'))
        .unwrap();
    // Db time 4 × 0.5 of 4 × 2.5; no rows read, so no share of them for any route.
    for cell in ["| screened ", "| 3.00 ", "| n/a ", "| 20.0% ", "| yes "] {
        assert!(search.contains(cell), "{cell} in {search}");
    }
    let items = (text.lines()).find(|l| l.contains("/items/")).unwrap();
    assert!(items.contains("| exact "), "{items}");
    assert!(text.contains(super::sections::SCREENED_NOTE), "{text}");
    let table = report.render(Format::Table).unwrap();
    assert!(table.contains("screened"), "{table}");
    assert!(table.contains("no settle wait"), "{table}");
}

#[test]
fn the_table_lists_every_route_with_its_credential_and_why_it_is_not_ranked() {
    let report = survey();
    let text = report.render(Format::Table).unwrap();
    let row = |route: &str| {
        (text.lines())
            .find(|l| l.contains(&format!("GET {route}")))
            .unwrap_or_else(|| panic!("{route} in {text}"))
    };
    assert!(row("/scan").contains("GET /scan [auth #1 /scan]"), "{text}");
    assert!(!row("/items/{id}").contains("[auth"), "{text}");
    assert!(row("/health").ends_with("static: no statement"), "{text}");
    assert!(row("/forbidden").contains("NOT VALID: "), "{text}");
    assert!(text.contains("skipped POST /write x1: "), "{text}");
    assert!(
        text.contains("static GET /assets/*.css x3: static file, by its extension"),
        "{text}"
    );
}
