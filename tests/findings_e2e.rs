//! Findings on real measurements: the fixture's naive permission gate is flagged as
//! collection-to-boolean, its EXISTS twin is not, and N+1 and connection-per-request
//! endpoints are named.

mod support;

use pgcost_core::findings::{FindingKind, parse_rate};
use pgcost_core::report::Report;
use support::fixture::Fixture;
use support::{GRANTS_PER_GROUP, GROUPS, SMALL, TestDb};

async fn audit(db: &TestDb, url: String, extra: &[&str]) -> Report {
    let report = support::audit(db, url.clone(), extra).await;
    assert!(report.valid, "{:?}", report.invalid_reasons);
    let (parsed, total) = parse_rate(&report.statements);
    println!("parse rate for {url}: {parsed}/{total}");
    assert_eq!(
        parsed, total,
        "every statement the fixture sends must parse: {:?}",
        report.statements
    );
    report
}

fn kinds(report: &Report) -> Vec<FindingKind> {
    report.findings.iter().map(|f| f.kind).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_set_is_flagged_and_exists_is_not() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 4).await;

    let naive = audit(&db, app.url("/perms-naive"), &["-n", "100", "-c", "4"]).await;
    let set_size = GROUPS * GRANTS_PER_GROUP + 1;
    assert_eq!(naive.per_request.rows_returned, Some(set_size as f64));
    let finding = naive
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::CollectionToBoolean)
        .unwrap_or_else(|| panic!("no collection_to_boolean in {:?}", kinds(&naive)));
    assert!(finding.query.as_deref().unwrap().contains("group_grants"));
    assert_eq!(finding.evidence["rows_per_call"], set_size as f64);
    assert!(
        finding.suggestion.contains("SELECT EXISTS (SELECT 1 FROM"),
        "{}",
        finding.suggestion
    );
    assert_eq!(
        naive.findings[0].kind,
        FindingKind::CollectionToBoolean,
        "ranked first"
    );

    let exists = audit(&db, app.url("/perms-exists"), &["-n", "100", "-c", "4"]).await;
    assert_eq!(exists.per_request.rows_returned, Some(1.0));
    assert!(
        !kinds(&exists).contains(&FindingKind::CollectionToBoolean),
        "{:?}",
        exists.findings
    );
    let naive_rows = naive.per_request.rows_returned.unwrap();
    assert!(naive_rows >= 10.0 * exists.per_request.rows_returned.unwrap());

    // The table view shows the finding below the numbers, within 100 columns.
    let text = pgcost::render::View::render(&naive, pgcost::render::format::Format::Table).unwrap();
    assert!(text.contains("collection_to_boolean"));
    for line in text.lines() {
        assert!(
            line.chars().count() <= 100,
            "line wider than 100 columns: {line}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n_plus_one_and_connection_per_request_are_named() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 4).await;

    let r = audit(&db, app.url("/n-plus-one"), &["-n", "60", "-c", "4"]).await;
    assert_eq!(r.per_request.statements, Some((1 + SMALL) as f64));
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::NPlusOne)
        .unwrap_or_else(|| panic!("no n_plus_one in {:?}", kinds(&r)));
    assert_eq!(f.evidence["calls_per_request"], SMALL as f64);
    assert!(f.suggestion.contains("ANY($1)"), "{}", f.suggestion);
    assert!(
        kinds(&r).contains(&FindingKind::RoundTrips),
        "{:?}",
        kinds(&r)
    );

    let r = audit(&db, app.url("/fresh"), &["-n", "40", "-c", "2"]).await;
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::ConnectionPerRequest)
        .unwrap_or_else(|| panic!("no connection_per_request in {:?}", kinds(&r)));
    assert_eq!(f.evidence["new_sessions_per_request"], 1.0);
    assert!(r.pool.peak_backends.is_some());
    assert_eq!(r.pool.max_connections, Some(100));

    let quiet = audit(
        &db,
        app.url("/fresh"),
        &["-n", "20", "-c", "2", "--no-findings"],
    )
    .await;
    assert!(quiet.findings.is_empty());
}
