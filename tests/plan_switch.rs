//! Plans that change under load: a prepared statement goes generic, with another plan,
//! after five executions on each pooled connection. pgcost warms up until every
//! statement's figures are steady, so the window holds one plan and is exact; a change
//! inside the window (here, the app's parameter changes at mid-burst, and the blocks per
//! call of the same statement with it) is measured again, and named when it persists.
//! Never silently off.

mod support;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use pgcost::progress::Progress;
use pgcost_core::report::Report;
use support::fixture::{Fixture, plan_switch};
use support::{DB, TestDb, assert_valid, audit, audit_config};

/// More connections than the default warm-up reaches six times each.
const POOL: usize = 16;
const REQUESTS: u64 = 1000;

/// The plan of the `i`th `EXPLAIN EXECUTE` of the prepared statement for `kind`, on one
/// connection.
async fn plans(client: &tokio_postgres::Client, kind: i32) -> Vec<String> {
    client
        .batch_execute(&format!("PREPARE q(int) AS {}", plan_switch::QUERY))
        .await
        .unwrap();
    let mut out = Vec::new();
    for _ in 0..6 {
        let rows = (client
            .query(&format!("EXPLAIN EXECUTE q({kind})"), &[])
            .await)
            .unwrap();
        let lines: Vec<String> = rows.iter().map(|r| r.get::<_, String>(0)).collect();
        out.push(lines.join("\n"));
    }
    client.batch_execute("DEALLOCATE q").await.unwrap();
    out
}

/// The seeded cluster, with the truth of the statement's plans checked on PG 15: for the
/// rare kind, five custom plans walk the index, then the generic plan (`$1` in its
/// condition) scans the table; for the common kind, every plan scans it.
async fn setup() -> TestDb {
    let db = TestDb::start().await;
    let app = db.connect(DB).await;
    app.batch_execute(plan_switch::SCHEMA).await.unwrap();
    app.batch_execute(plan_switch::ANALYZE).await.unwrap();
    let rare = plans(&app, plan_switch::RARE).await;
    for custom in &rare[..5] {
        assert!(
            custom.contains("Index Scan using plan_switch_kind"),
            "{custom}"
        );
    }
    let generic = &rare[5];
    assert!(
        generic.contains("Seq Scan on plan_switch") && generic.contains("$1"),
        "{generic}"
    );
    for plan in plans(&app, 0).await {
        assert!(plan.contains("Seq Scan on plan_switch"), "{plan}");
    }
    // Else pg_stat_statements keeps the PREPARE above as the statement's text.
    app.batch_execute("SELECT pg_stat_statements_reset()")
        .await
        .unwrap();
    db
}

fn notes(report: &Report) -> serde_json::Value {
    serde_json::to_value(report).unwrap()["notes"].clone()
}

fn plan_changed(report: &Report) -> Option<serde_json::Value> {
    let notes = notes(report);
    (notes.as_array().unwrap().iter())
        .find(|n| n["code"] == "plan_changed")
        .cloned()
}

/// One plan on every connection: one statement, one transaction, `rows_read` rows read
/// (the generic plan's scan up to the first match), one row returned.
fn assert_one_plan(report: &Report, rows_read: i64) {
    let p = &report.per_request;
    assert_eq!(p.statements, Some(1.0), "{p:?}");
    assert_eq!(p.transactions, 1.0, "{p:?}");
    assert_eq!(p.rows_read, rows_read as f64, "{p:?}");
    assert_eq!(p.rows_returned, Some(1.0), "{p:?}");
    assert_eq!(p.new_sessions, Some(0.0), "{p:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_switch_after_the_warm_up_is_warmed_past() {
    let db = setup().await;
    let fixture = Fixture::start(&db.url(), POOL).await;
    let extra = ["-n", "200", "-c", "16", "--warmup", "20"];
    let report = audit(&db, fixture.url("/plan-switch"), &extra).await;
    assert_valid(&report);
    let warmed = report.load.warmup_done.clone().expect("a steady warm-up");
    eprintln!("warm-up: {warmed:?}; per request: {:?}", report.per_request);
    match plan_changed(&report) {
        // Named: the figures mix both plans, and the statement says which.
        Some(note) => {
            let statement = note["statement"].as_str().unwrap();
            assert!(statement.contains("plan_switch"), "{note}");
        }
        None => {
            assert!(warmed.steady, "{warmed:?}: {}", notes(&report));
            // Past the floor: 16 connections need 96 requests to each see a sixth.
            assert!(warmed.requests >= 96, "{warmed:?}");
            assert_one_plan(&report, plan_switch::SCAN_TO_RARE);
        }
    }
}

/// Audits `/plan-switch/late`, which switches from the rare kind to the common one at the
/// middle of the first burst.
async fn audit_late(db: &TestDb, fixture: &Fixture, retries: &str) -> Report {
    let url = fixture.url("/plan-switch/late");
    let n = REQUESTS.to_string();
    let extra = ["-n", &n, "-c", "4", "--warmup", "40", "--retries", retries];
    let config = audit_config(db, url, &extra);
    let stop = Arc::new(AtomicBool::new(false));
    let arm = |_| plan_switch::switch_after(REQUESTS / 2);
    let mut reports = pgcost::measure::run_sequence(&[config], &Progress::hidden(), stop, arm)
        .await
        .unwrap();
    reports.pop().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_inside_the_window_is_measured_again_or_named() {
    let db = setup().await;
    let fixture = Fixture::start(&db.url(), 4).await;

    // Measured again: the next window holds the new figures only, exactly.
    let report = audit_late(&db, &fixture, "2").await;
    assert_valid(&report);
    eprintln!(
        "warm-up: {:?}; windows: {:?}; per request: {:?}",
        report.load.warmup_done, report.windows, report.per_request
    );
    assert_eq!(report.windows.discarded, 1, "{:?}", report.windows);
    assert!(report.windows.reasons[0].contains("plan of 1 statement(s) changed"));
    assert!(plan_changed(&report).is_none(), "{}", notes(&report));
    // The common kind under the generic plan: the scan's first row matches.
    assert_one_plan(&report, 1);

    // No retry left: the window stands, and the statement is named with both halves.
    let report = audit_late(&db, &fixture, "0").await;
    eprintln!("warm-up: {:?}", report.load.warmup_done);
    let note = plan_changed(&report).unwrap_or_else(|| panic!("{}", notes(&report)));
    eprintln!("{note}");
    let statement = note["statement"].as_str().unwrap();
    assert!(
        statement.starts_with("SELECT val FROM plan_switch WHERE kind = $1 LIMIT"),
        "{note}"
    );
    let blocks = note["blocks_per_call"].as_array().unwrap();
    let (first, second) = (blocks[0].as_f64().unwrap(), blocks[1].as_f64().unwrap());
    assert!(first > 10.0 * second, "{note}");
    assert_eq!(
        note["rows_per_call"],
        serde_json::json!([1.0, 1.0]),
        "{note}"
    );
}
