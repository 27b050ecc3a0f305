//! The PostgreSQL version matrix: every layout of `pg_stat_statements` (1.8 to 1.12) and of
//! `pg_stat_database` is read on a real server, and an audit is exact where that version
//! allows it. Runs against whatever `PGCOST_PG_BIN` points at (`.ci/pg-matrix.sh` sets it
//! to each major from 13 to 18, and sets `PGCOST_EXPECT_PG_MAJOR`), or the default server.

mod support;

use support::{assert_valid, audit, audit_config, table};

use pgcost::postgres::conninfo::{self, DbTarget};
use pgcost::postgres::settle::Probe;
use pgcost::postgres::stats_connection::{Mode, StatsConnection};
use pgcost::postgres::views::StatementsLayout;
use pgcost_core::report::Report;
use pgcost_core::report::model::notes::Note;
use support::fixture::Fixture;
use support::{DB, ITEMS, SMALL, TestDb};

/// What a major ships: its `pg_stat_statements` version and the layout pgcost reads it with.
fn shipped_extension(major: i32) -> Option<(&'static str, StatementsLayout)> {
    Some(match major {
        13 => ("1.8", StatementsLayout::V1_8),
        14 => ("1.9", StatementsLayout::V1_9),
        15 | 16 => ("1.10", StatementsLayout::V1_9),
        17 => ("1.11", StatementsLayout::V1_9),
        18 => ("1.12", StatementsLayout::V1_9),
        _ => return None,
    })
}

/// The warning every report from a stats-collector server (before 15) carries.
const OLD_SERVER_WARNING: &str = "older than 15";

fn target(db: &TestDb) -> DbTarget {
    conninfo::resolve(Some(&db.url()), &|_| None).unwrap()
}

/// Checks the server is the major the matrix asked for, and returns its major.
fn checked_major(version_num: i32) -> i32 {
    let major = version_num / 10000;
    if let Ok(expected) = std::env::var("PGCOST_EXPECT_PG_MAJOR") {
        assert_eq!(
            major.to_string(),
            expected,
            "server_version_num {version_num} is not the expected major (PGCOST_PG_BIN={:?})",
            std::env::var("PGCOST_PG_BIN")
        );
    }
    major
}

fn has_old_server_warning(report: &Report) -> bool {
    report
        .notes
        .iter()
        .map(Note::message)
        .any(|w| w.contains(OLD_SERVER_WARNING))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_view_reads_with_this_servers_layout() {
    let db = TestDb::start().await;
    let mut source = StatsConnection::open(&target(&db), "postgres")
        .await
        .unwrap();
    assert_eq!(source.mode, Mode::Admin, "{:?}", source.warnings);
    let server = source.server.clone();
    let major = checked_major(server.version_num);
    assert!(
        server.version.starts_with(&major.to_string()),
        "{}",
        server.version
    );

    let extversion = source
        .extension_version
        .clone()
        .expect("pg_stat_statements is installed in the admin database");
    let layout = source.layout.expect("a known pg_stat_statements layout");
    assert_eq!(Some(layout), StatementsLayout::for_version(&extversion));
    if let Some((shipped, shipped_layout)) = shipped_extension(major) {
        assert_eq!(
            extversion, shipped,
            "PG {major} ships pg_stat_statements {shipped}"
        );
        assert_eq!(layout, shipped_layout);
    }
    let old_server_warned = source
        .warnings
        .iter()
        .map(Note::message)
        .any(|w| w.contains(OLD_SERVER_WARNING));
    assert_eq!(old_server_warned, major < 15, "{:?}", source.warnings);

    // A statement that runs a nested one: on 13 (no `toplevel`) both are rows of their own
    // with no way to tell them apart; from 14 on the nested one is `toplevel = false`.
    let app = db.connect(DB).await;
    app.batch_execute(
        "CREATE FUNCTION pgcost_matrix_nested() RETURNS bigint LANGUAGE plpgsql AS
         $$ BEGIN RETURN (SELECT count(*) FROM small); END $$",
    )
    .await
    .unwrap();
    let before = source.snapshot().await.unwrap();
    app.query_one("SELECT pgcost_matrix_nested()", &[])
        .await
        .unwrap();
    let mut after = source.snapshot().await.unwrap();
    // Admin-mode snapshots skip the texts; the entries that changed are named afterwards.
    assert!(after.statements.values().all(|s| s.query.is_empty()));
    source
        .name_changed(
            &pgcost_core::snapshot::calls(&before.statements),
            &mut after,
        )
        .await
        .unwrap();

    assert_eq!(
        after.statements_info.is_some(),
        layout.has_info(),
        "pg_stat_statements_info is read exactly from 1.9 on ({extversion})"
    );
    if let (Some(b), Some(a)) = (&before.statements_info, &after.statements_info) {
        assert_eq!(a.dealloc, b.dealloc, "nothing is evicted by two statements");
    }
    assert_eq!(
        after.database.counters.sessions.is_some(),
        major >= 14,
        "pg_stat_database.sessions exists from 14 on"
    );

    let window = pgcost_core::delta::delta(&before, &after);
    let find = |text: &str| {
        window
            .statements
            .iter()
            .find(|s| s.query.contains(text))
            .unwrap_or_else(|| panic!("no statement like {text:?} in {:?}", window.statements))
    };
    let outer = find("pgcost_matrix_nested()");
    let inner = find("count(*) FROM small");
    assert_eq!((outer.calls, outer.rows), (1, 1));
    assert_eq!((inner.calls, inner.rows), (1, 1));
    if layout == StatementsLayout::V1_9 {
        assert_eq!(outer.key.toplevel, Some(true));
        assert_eq!(inner.key.toplevel, Some(false));
    } else {
        assert_eq!(outer.key.toplevel, None);
        assert_eq!(inner.key.toplevel, None);
    }

    // The other views pgcost reads, and the settle probe's own queries.
    let tables = source.tables().await.unwrap();
    assert!(
        tables.contains_key("public.items") && tables.contains_key("public.small"),
        "{tables:?}"
    );
    assert!(source.client_backends().await.unwrap() >= 1);
    source.activity().await.unwrap();
    source.counters().await.unwrap();

    // Target mode: the fallback reads through the target and, on 15+, forces its own
    // flush with pg_stat_force_next_flush().
    let mut fallback = StatsConnection::open(&target(&db), DB).await.unwrap();
    assert_eq!(fallback.mode, Mode::Target);
    assert_eq!(fallback.layout, Some(layout));
    let snapshot = fallback.calibrated_before().await.unwrap();
    assert_eq!(snapshot.statements_info.is_some(), layout.has_info());
    fallback.activity().await.unwrap();
}

/// Tags read black-box on every major: by `query_id` from 14 on, by the normalised text on
/// 13 (no `query_id` in `pg_stat_activity`). The one statement of the endpoint carries its
/// route, controller and file:line in every sample.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tags_are_read_on_this_major() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 4).await;
    let r = audit(&db, app.url("/tagged"), &["-n", "100", "-c", "4"]).await;
    assert_valid(&r);
    checked_major(r.target.server_version_num);
    assert_eq!(r.statements.len(), 1, "{:?}", r.statements);
    let tags = r.statements[0].tags.as_ref().expect("the statement's tags");
    assert!(tags.samples > 0, "{tags:?}");
    assert_eq!(tags.seen.len(), 1, "{tags:?}");
    let seen = &tags.seen[0];
    assert_eq!(seen.share, Some(1.0), "{tags:?}");
    assert_eq!(seen.tags.route.as_deref(), Some("/tagged"));
    assert_eq!(seen.tags.controller.as_deref(), Some("items"));
    assert_eq!(seen.tags.file.as_deref(), Some("app/controllers/items.rb"));
    assert_eq!(seen.tags.line, Some(12));
    let summary = r.tags.as_ref().expect("the report's tag summary");
    assert!(summary.samples.is_some_and(|n| n > 0), "{summary:?}");
    assert_eq!((summary.statements, summary.tagged), (1, 1), "{summary:?}");
}

/// A persistent pool: exact from 15 on. Before 15 the stats collector lets an idle pooled
/// connection keep its last counters, so only `pg_stat_statements` figures are exact there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pooled_endpoint() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 4).await;
    let r = audit(&db, app.url("/scan"), &["-n", "100", "-c", "4"]).await;
    assert_valid(&r);
    let major = checked_major(r.target.server_version_num);
    assert_eq!(r.target.stats_source, "admin");
    let p = &r.per_request;
    // pg_stat_statements is updated in shared memory at executor end, on every version.
    assert_eq!(p.statements, Some(1.0), "{p:?}");
    assert_eq!(p.rows_returned, Some(ITEMS as f64), "{p:?}");
    assert_eq!(r.statements.len(), 1, "{:?}", r.statements);
    assert_eq!(r.statements[0].calls_per_request, 1.0);
    assert_eq!(r.statements[0].rows_per_call, ITEMS as f64);
    assert_eq!(has_old_server_warning(&r), major < 15, "{:?}", r.notes);
    if major < 15 {
        return;
    }
    assert_eq!(p.transactions, 1.0, "{p:?}");
    assert_eq!(p.rows_read, ITEMS as f64, "{p:?}");
    assert_eq!(p.rows_written, 0.0, "{p:?}");
    assert_eq!(p.new_sessions, Some(0.0), "{p:?}");
    let items = table(&r, "public.items");
    assert_eq!(items.seq_scans, 1.0);
    assert_eq!(items.seq_rows_read, ITEMS as f64);
}

/// A connection per request: every backend exits, and an exiting backend publishes its
/// counters at once on every version, so this is exact from 13 on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_per_request_endpoint() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 2).await;
    let r = audit(&db, app.url("/fresh"), &["-n", "40", "-c", "2"]).await;
    assert_valid(&r);
    let major = checked_major(r.target.server_version_num);
    assert_eq!(r.target.stats_source, "admin");
    assert_eq!(has_old_server_warning(&r), major < 15, "{:?}", r.notes);
    let p = &r.per_request;
    // The backend's start-up transaction, then tokio-postgres's unprepared query: Parse and
    // Sync, then Bind, Execute and Sync.
    assert_eq!(p.transactions, 3.0, "{p:?}");
    // The scan of `small` plus the new backend's catalog reads, which vary by major but are
    // the same for every request: a counter published late would leave a fraction.
    assert!(
        p.rows_read >= SMALL as f64 && p.rows_read.fract() == 0.0,
        "{p:?}"
    );
    assert_eq!(p.rows_fetched.fract(), 0.0, "{p:?}");
    assert_eq!(p.statements, Some(1.0), "{p:?}");
    assert_eq!(p.rows_returned, Some(SMALL as f64), "{p:?}");
    assert_eq!(
        p.new_sessions,
        (major >= 14).then_some(1.0),
        "sessions is counted from 14 on: {p:?}"
    );
    let warned = r
        .notes
        .iter()
        .map(Note::message)
        .any(|w| w.contains("new connection"));
    assert_eq!(warned, major >= 14, "{:?}", r.notes);
    assert_eq!(p.rows_written, 0.0, "{p:?}");
    let small = table(&r, "public.small");
    assert_eq!(small.seq_scans, 1.0);
    assert_eq!(small.seq_rows_read, SMALL as f64);
}

/// Plans on every major (GENERIC_PLAN from 16, PREPARE and EXPLAIN EXECUTE before): two
/// endpoints measured in one sequence, as `check` does, and the plans fetched after the
/// last window, so that neither window counts a statement of theirs. Each endpoint's
/// seq_scan_heavy finding carries its plan, which names the scan, and the index it calls
/// for: the filtered column, and the sort key of a top-N sort under a LIMIT.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plans_of_the_findings() {
    let db = TestDb::start().await;
    db.seed_plan_orders().await;
    let app = Fixture::start(&db.url(), 2).await;
    let args = ["-n", "40", "-c", "2"];
    let configs = [
        audit_config(&db, app.url("/plans/filter"), &args),
        audit_config(&db, app.url("/plans/page"), &args),
    ];
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let progress = pgcost::progress::Progress::hidden();
    let reports = pgcost::measure::run_sequence(&configs, &progress, stop, |_| {})
        .await
        .unwrap();
    let [filter, page] = reports.as_slice() else {
        panic!("two reports")
    };
    let major = checked_major(filter.target.server_version_num);

    let expected = [
        (
            filter,
            "SELECT id, total FROM plan_orders WHERE customer_ref = $1",
            "Filter: (customer_ref = $1)",
            "customer_ref",
        ),
        (
            page,
            "SELECT id, total FROM plan_orders ORDER BY created_at DESC LIMIT $1",
            "Sort Key: created_at DESC",
            "created_at",
        ),
    ];
    for (report, query, plan_line, column) in expected {
        assert_valid(report);
        // Only the app's statement in the window: the EXPLAINs came after the last one.
        assert_eq!(
            report.per_request.statements,
            Some(1.0),
            "{:?}",
            report.statements
        );
        assert_eq!(report.statements[0].query, query);
        assert!(
            !report
                .notes
                .iter()
                .map(Note::message)
                .any(|w| w.contains("plans skipped")),
            "{:?}",
            report.notes
        );
        let statement_plan = report.statements[0].plan.as_deref().expect("a plan");
        assert!(
            statement_plan.contains("Seq Scan on plan_orders")
                && statement_plan.contains(plan_line),
            "PG {major}: {statement_plan}"
        );
        let finding = report
            .findings
            .iter()
            .find(|f| f.kind == pgcost_core::findings::FindingKind::SeqScanHeavy)
            .unwrap_or_else(|| panic!("PG {major}: no seq_scan_heavy in {:?}", report.findings));
        assert_eq!(finding.query.as_deref(), Some(query));
        assert_eq!(finding.plan.as_deref(), Some(statement_plan));
        let index = finding.index.as_ref().expect("an index proposal");
        assert_eq!(index.columns, vec![column.to_string()]);
        assert_eq!(
            index.statement,
            format!("CREATE INDEX CONCURRENTLY ON public.plan_orders ({column});")
        );
        assert_eq!(index.verified, None, "no hypopg in the test cluster");
    }
}
