//! `planning_dominates` on a real server: a ten-table join sent unprepared is planned on
//! every request, and with pg_stat_statements.track_planning on it is named with its plan
//! time, which agrees with the planning time EXPLAIN measures for the same text. The same
//! join prepared once per connection is not named; with track_planning off nothing is, and
//! the report says how to turn it on.

mod support;

use pgcost_core::findings::FindingKind;
use pgcost_core::report::Report;
use pgcost_core::report::model::notes::Note;
use support::fixture::{Fixture, planning};
use support::{TestDb, assert_valid};

const ARGS: [&str; 4] = ["-n", "60", "-c", "2"];

fn planning_findings(report: &Report) -> Vec<&pgcost_core::findings::Finding> {
    (report.findings.iter())
        .filter(|f| f.kind == FindingKind::PlanningDominates)
        .collect()
}

/// The median planning time of the join, in ms, as `EXPLAIN (SUMMARY)` reports it: the
/// truth the finding's figure is held to, measured without pg_stat_statements.
async fn explained_plan_ms(client: &tokio_postgres::Client) -> f64 {
    let mut times = Vec::new();
    for _ in 0..21 {
        let rows = client
            .query(&format!("EXPLAIN (SUMMARY ON) {}", planning::join()), &[])
            .await
            .unwrap();
        let line = (rows.iter())
            .map(|r| r.get::<_, String>(0))
            .find(|l| l.starts_with("Planning Time:"))
            .expect("EXPLAIN (SUMMARY ON) prints the planning time");
        let ms: f64 = (line.trim_start_matches("Planning Time:").trim())
            .trim_end_matches(" ms")
            .parse()
            .unwrap();
        times.push(ms);
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// The join's calls and plans in pg_stat_statements, summed over its entries.
async fn calls_and_plans(admin: &tokio_postgres::Client) -> (i64, i64) {
    let row = admin
        .query_one(
            "SELECT coalesce(sum(calls), 0)::bigint, coalesce(sum(plans), 0)::bigint \
             FROM pg_stat_statements WHERE query LIKE '%JOIN chain9%' AND toplevel",
            &[],
        )
        .await
        .unwrap();
    (row.get(0), row.get(1))
}

/// Sets pg_stat_statements.track_planning for the sessions that start from now on (a
/// reload, as a superuser would do it on a live server).
async fn track_planning(admin: &tokio_postgres::Client, value: &str) {
    let set = format!("ALTER SYSTEM SET pg_stat_statements.track_planning = {value}");
    admin.batch_execute(&set).await.unwrap();
    admin
        .batch_execute("SELECT pg_reload_conf()")
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_join_planned_on_every_request_is_named_only_when_planning_is_tracked() {
    let db = TestDb::start().await;
    let app_db = db.connect(support::DB).await;
    app_db.batch_execute(&planning::schema()).await.unwrap();
    app_db.batch_execute("VACUUM ANALYZE").await.unwrap();
    let admin = db.connect(support::DB).await;
    track_planning(&admin, "on").await;
    let app = Fixture::start(&db.url(), 2).await;

    // Unprepared: one plan per call, as pg_stat_statements' own `plans` counter shows.
    let (calls0, plans0) = calls_and_plans(&admin).await;
    let report = support::audit(&db, app.url("/planning/unprepared"), &ARGS).await;
    assert_valid(&report);
    let (calls1, plans1) = calls_and_plans(&admin).await;
    assert!(calls1 - calls0 >= 60, "{calls0} -> {calls1}");
    assert_eq!(plans1 - plans0, calls1 - calls0, "planned on every call");
    let truth = explained_plan_ms(&admin).await;
    let found = planning_findings(&report);
    assert_eq!(found.len(), 1, "{:#?}", report.findings);
    let f = found[0];
    assert!(f.query.as_deref().unwrap().contains("JOIN chain9"), "{f:?}");
    assert_eq!(f.evidence["calls_per_request"], 1.0);
    assert_eq!(f.evidence["relations"], planning::TABLES as f64);
    let plan = f.evidence["plan_ms_per_call"];
    assert!(plan >= f.evidence["exec_ms_per_call"], "{f:?}");
    // The same planner on the same text: within a factor of 3 of EXPLAIN's median.
    assert!(
        plan >= truth / 3.0 && plan <= truth * 3.0,
        "plan time per call {plan} ms, EXPLAIN's {truth} ms"
    );
    assert_eq!(f.saves_per_request.plan_time_ms, plan);
    assert!(f.suggestion.contains("prepare it once per connection"));
    assert!(!report.notes.contains(&Note::TrackPlanningOff));

    // Prepared once per pooled connection: planned a few times at most, not named.
    let prepared = support::audit(&db, app.url("/planning/prepared"), &ARGS).await;
    assert_valid(&prepared);
    assert!(
        planning_findings(&prepared).is_empty(),
        "{:#?}",
        prepared.findings
    );

    // track_planning off (a reload suffices): plan time is unknown, the note says so.
    track_planning(&admin, "off").await;
    let untracked = support::audit(&db, app.url("/planning/unprepared"), &ARGS).await;
    assert_valid(&untracked);
    assert!(planning_findings(&untracked).is_empty());
    assert!(
        untracked.notes.contains(&Note::TrackPlanningOff),
        "{:?}",
        untracked.notes
    );
    let join = (untracked.statements.iter())
        .find(|s| s.query.contains("JOIN chain9"))
        .expect("the join is measured");
    assert_eq!(join.mean_plan_ms, None);
}
