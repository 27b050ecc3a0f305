//! The scale views on a hand-built report: the slope next to each statement, and every
//! format renders.

use crate::render::format::Format;
use crate::render::view::View;
use pgcost_core::findings::{Finding, FindingKind, Saving, Severity};
use pgcost_core::scale::{Fit, Growth, Point, ScaleReport, StatementGrowth, TableGrowth};

fn fit(slope: f64, intercept: f64) -> Fit {
    Fit {
        slope,
        intercept,
        r2: 1.0,
    }
}

pub(crate) fn sample() -> ScaleReport {
    let per_request = crate::render::tests::sample().per_request;
    let point = |n: u64| Point {
        n,
        url: format!("http://127.0.0.1:1/items?limit={n}"),
        valid: true,
        requests: 200,
        per_request: per_request.clone(),
    };
    ScaleReport {
        schema_version: 1,
        valid: true,
        invalid_reasons: vec![],
        method: "GET".into(),
        url: "http://127.0.0.1:1/items?limit={n}".into(),
        param: "n".into(),
        points: vec![point(5), point(10), point(20)],
        per_request: Growth {
            statements: Some(fit(1.0, 2.0)),
            rows_read: Some(fit(2.0, 1000.0)),
            rows_returned: Some(fit(2.0, 1.0)),
            transactions: Some(fit(0.0, 1.0)),
            ..Growth::from_fn(|_| None)
        },
        statements: vec![
            StatementGrowth {
                query: "SELECT tag FROM tags WHERE item_id = $1".into(),
                queryid: "3".into(),
                calls_per_request: vec![5.0, 10.0, 20.0],
                fit: fit(1.0, 0.0),
                database: None,
            },
            StatementGrowth {
                query: "SELECT count(*) FROM items".into(),
                queryid: "2".into(),
                calls_per_request: vec![1.0, 1.0, 1.0],
                fit: fit(0.0, 1.0),
                database: None,
            },
        ],
        tables: vec![TableGrowth {
            table: "public.tags".into(),
            rows_read_per_request: vec![5.0, 10.0, 20.0],
            fit: fit(1.0, 0.0),
            database: None,
        }],
        findings: vec![Finding {
            kind: FindingKind::NPlusOne,
            severity: Severity::High,
            query: Some("SELECT tag FROM tags WHERE item_id = $1".into()),
            table: None,
            evidence: [("slope".to_string(), 1.0)].into(),
            suggestion: "Batch it.".into(),
            unparsed: false,
            avoidable_rows_per_request: 0.0,
            round_trips_per_request: 19.0,
            plan: None,
            index: None,
            saves_per_request: Saving::default(),
            database: None,
            locations: Vec::new(),
            tags: None,
        }],
    }
}

#[test]
fn the_table_shows_the_slope_next_to_each_statement() {
    let text = sample().render(Format::Table).unwrap();
    let row = (text.lines())
        .find(|l| l.contains("SELECT tag FROM tags"))
        .unwrap();
    assert!(row.contains("1.00"), "{row}");
    assert!(row.contains("20.00"), "{row}");
    let count = (text.lines()).find(|l| l.contains("count(*)")).unwrap();
    assert!(count.contains("0.00"), "{count}");
    assert!(text.contains("n_plus_one"), "{text}");
    // The request's figures, one line each: a figure without a fit is n/a.
    let growth: Vec<&str> = (text.lines())
        .filter(|l| {
            ["transactions", "p95 ms", "rows returned"]
                .iter()
                .any(|f| l.contains(f))
        })
        .filter(|l| l.contains("n/a") || l.contains("1.000"))
        .collect();
    assert_eq!(growth.len(), 3, "{text}");
    assert!(growth[2].contains("n/a"), "{text}");
}

#[test]
fn every_format_renders() {
    let report = sample();
    let json: serde_json::Value =
        serde_json::from_str(&report.render(Format::Json).unwrap()).unwrap();
    assert_eq!(json["statements"][0]["slope"], 1.0);
    assert_eq!(json["statements"][0]["r2"], 1.0);
    assert_eq!(json["points"][2]["n"], 20);
    assert_eq!(json["tables"][0]["slope"], 1.0);
    let markdown = report.render(Format::Markdown).unwrap();
    assert!(markdown.contains("| 1.00 "), "{markdown}");
    let html = report.render(Format::Html).unwrap();
    assert!(html.contains("<svg"), "charts are drawn");
    assert!(
        html.contains("Transactions per request"),
        "each figure with a fit"
    );
    assert!(
        !html.contains("P95 ms per request"),
        "latency has no points to draw"
    );
    assert!(
        html.contains("fit: 0.00 + 1.00·n"),
        "the fitted line is named"
    );
    assert!(report.render(Format::Junit).is_err());
}

#[test]
fn a_tagged_finding_names_who_sent_it_and_its_line_in_every_view() {
    use pgcost_core::tags::seen_always;
    let mut report = sample();
    let tags = seen_always("/items", "app/items.rb", 7, 2);
    report.findings[0].locations = pgcost_core::findings::sent_from::locations(&tags, None);
    report.findings[0].tags = Some(tags);
    for format in [Format::Table, Format::Markdown, Format::Html] {
        let text = report.render(format).unwrap();
        assert!(text.contains("route /items"), "{format:?}: {text}");
        assert!(text.contains("app/items.rb:7"), "{format:?}: {text}");
    }
    let sarif: serde_json::Value =
        serde_json::from_str(&report.render(Format::Sarif).unwrap()).unwrap();
    let physical = &sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
    assert_eq!(physical["artifactLocation"]["uri"], "app/items.rb");
}
