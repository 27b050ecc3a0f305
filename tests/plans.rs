//! Plans on the default server (the PostgreSQL of `PATH` or /usr/lib/postgresql, never
//! `.ci/pg-matrix.sh`'s): hypopg verifies the proposed indexes without touching the
//! measured figures or leaving a hypothetical index behind, and `--no-plans` fetches no
//! plan and changes no figure.

mod support;

use pgcost_core::findings::FindingKind;
use pgcost_core::report::Report;
use pgcost_core::report::model::notes::Note;
use support::fixture::Fixture;
use support::{PLAN_ORDERS, TestDb, assert_valid};

const ARGS: [&str; 4] = ["-n", "40", "-c", "2"];
const FILTER: &str = "SELECT id, total FROM plan_orders WHERE customer_ref = $1";
const PAGE: &str = "SELECT id, total FROM plan_orders ORDER BY created_at DESC LIMIT $1";

/// The figures a plan must never change: everything but the timings.
fn figures(report: &Report) -> [Option<f64>; 8] {
    let p = &report.per_request;
    [
        Some(p.transactions),
        p.statements,
        p.statements_excluding_utility,
        Some(p.rows_read),
        Some(p.rows_fetched),
        p.rows_returned,
        Some(p.rows_written),
        Some(p.blocks_hit + p.blocks_read),
    ]
}

fn seq_scan_heavy(report: &Report) -> &pgcost_core::findings::Finding {
    (report.findings.iter())
        .find(|f| f.kind == FindingKind::SeqScanHeavy)
        .unwrap_or_else(|| panic!("no seq_scan_heavy in {:?}", report.findings))
}

/// Calls of the statements whose text contains `needle` (pgcost's own, in any database).
async fn calls(admin: &tokio_postgres::Client, needle: &str) -> i64 {
    admin
        .query_one(
            "SELECT coalesce(sum(calls), 0)::int8 FROM pg_stat_statements
             WHERE query LIKE '/* pgcost */%' AND strpos(query, $1) > 0",
            &[&needle],
        )
        .await
        .unwrap()
        .get(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hypopg_verifies_the_proposed_indexes() {
    let db = TestDb::start().await;
    db.seed_plan_orders().await;
    let app_db = db.connect(support::DB).await;
    let available: bool = app_db
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'hypopg')",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert!(
        available,
        "hypopg is not installed for this server: apt-get install postgresql-15-hypopg \
         (.ci/run does it)"
    );
    let app = Fixture::start(&db.url(), 2).await;

    // Without the extension in the target database, the proposal is unverified.
    let unverified = support::audit(&db, app.url("/plans/filter"), &ARGS).await;
    assert_valid(&unverified);
    assert_eq!(
        seq_scan_heavy(&unverified).index.as_ref().unwrap().verified,
        None
    );

    app_db
        .batch_execute("CREATE EXTENSION hypopg")
        .await
        .unwrap();
    let filter = support::audit(&db, app.url("/plans/filter"), &ARGS).await;
    let page = support::audit(&db, app.url("/plans/page"), &ARGS).await;

    // (report, statement, rows returned per request, indexed column)
    let expected = [
        (&filter, FILTER, 5.0, "customer_ref"),
        (&page, PAGE, 25.0, "created_at"),
    ];
    for (report, query, rows, column) in expected {
        assert_valid(report);
        // The EXPLAINs and the hypothetical index came after the window: only the app's
        // statement in it.
        assert_eq!(
            report.per_request.statements,
            Some(1.0),
            "{:?}",
            report.statements
        );
        assert_eq!(report.per_request.rows_returned, Some(rows));
        assert_eq!(report.statements[0].query, query);
        let finding = seq_scan_heavy(report);
        assert_eq!(finding.query.as_deref(), Some(query));
        let index = finding.index.as_ref().expect("an index proposal");
        assert_eq!(index.columns, vec![column.to_string()]);
        assert_eq!(
            index.statement,
            format!("CREATE INDEX CONCURRENTLY ON public.plan_orders ({column});")
        );
        assert_eq!(index.verified, Some(true), "{query}");
        // The plan shown is the real one, fetched before the hypothetical index existed.
        let plan = finding.plan.as_deref().expect("a plan");
        assert!(plan.contains("Seq Scan on plan_orders"), "{plan}");
        assert!(!plan.contains("btree_plan_orders"), "{plan}");
        // The table view lists findings in brief; Markdown keeps the index and the plan.
        let text =
            pgcost::render::View::render(report, pgcost::render::format::Format::Markdown).unwrap();
        assert!(
            text.contains("hypopg: the planner would use it") && text.contains(&index.statement),
            "{text}"
        );
        let json = pgcost::render::json(report);
        assert!(json.contains("\"verified\": true"), "{json}");
    }

    // hypopg changes `verified` and nothing else: the same endpoint, the same figures.
    assert_eq!(figures(&filter), figures(&unverified));
    assert_eq!(filter.per_request.rows_read, PLAN_ORDERS as f64);

    // No hypothetical index is left: every one pgcost created was dropped again, in its own
    // backend (hypopg's indexes live there), and none is visible from another.
    let admin = db.connect("postgres").await;
    assert_eq!(calls(&admin, "hypopg_create_index(").await, 2);
    assert_eq!(calls(&admin, "hypopg_reset()").await, 2);
    let left: i64 = db
        .connect(support::DB)
        .await
        .query_one("SELECT count(*) FROM hypopg_list_indexes", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(left, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_plans_fetches_none_and_changes_no_figure() {
    let db = TestDb::start().await;
    db.seed_plan_orders().await;
    let app = Fixture::start(&db.url(), 2).await;

    for path in ["/plans/filter", "/plans/page"] {
        // With plans first: their EXPLAINs leave a nested pg_stat_statements entry of the
        // app's queryid with pgcost's text, which must not hide the app's statement later.
        let with = support::audit(&db, app.url(path), &ARGS).await;
        let mut args = ARGS.to_vec();
        args.push("--no-plans");
        let without = support::audit(&db, app.url(path), &args).await;
        assert_valid(&with);
        assert_valid(&without);

        assert!(
            with.statements[0].plan.is_some(),
            "{path}: {:?}",
            with.statements
        );
        assert!(seq_scan_heavy(&with).index.is_some());
        assert!(
            without.statements.iter().all(|s| s.plan.is_none()),
            "{path}"
        );
        assert!(
            (without.findings.iter()).all(|f| f.plan.is_none() && f.index.is_none()),
            "{path}: {:?}",
            without.findings
        );
        // The finding itself does not depend on the plan.
        assert_eq!(
            (without.findings.iter())
                .map(|f| f.kind)
                .collect::<Vec<_>>(),
            (with.findings.iter()).map(|f| f.kind).collect::<Vec<_>>()
        );
        for report in [&with, &without] {
            assert!(
                !report
                    .notes
                    .iter()
                    .map(Note::message)
                    .any(|w| w.contains("plan")),
                "{path}: {:?}",
                report.notes
            );
        }
        assert_eq!(figures(&without), figures(&with), "{path}");
        assert_eq!(without.per_request.statements, Some(1.0));
    }
}

/// The seq_scan_heavy finding of `table`, if the report has one.
fn heavy_on<'a>(report: &'a Report, table: &str) -> Option<&'a pgcost_core::findings::Finding> {
    (report.findings.iter())
        .find(|f| f.kind == FindingKind::SeqScanHeavy && f.table.as_deref() == Some(table))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_proposals_look_through_joins_and_are_verified() {
    use support::fixture::plan_joins;
    let db = TestDb::start().await;
    db.seed_plan_orders().await;
    let app_db = db.connect(support::DB).await;
    app_db.batch_execute(plan_joins::SCHEMA).await.unwrap();
    app_db.batch_execute(plan_joins::ANALYZE).await.unwrap();
    app_db
        .batch_execute("CREATE EXTENSION hypopg")
        .await
        .unwrap();
    let app = Fixture::start(&db.url(), 2).await;

    // (path, statement, rows returned per request, the proposed column)
    let proposed = [
        ("/plans/join-page", plan_joins::PAGE, 25.0, "created_at"),
        (
            "/plans/join-filter",
            plan_joins::FILTER,
            5.0,
            "customer_ref",
        ),
    ];
    for (path, query, rows, column) in proposed {
        let report = support::audit(&db, app.url(path), &ARGS).await;
        assert_valid(&report);
        assert_eq!(report.per_request.statements, Some(1.0), "{path}");
        assert_eq!(report.per_request.rows_returned, Some(rows), "{path}");
        // pg_stat_statements normalizes the LIMIT's constant.
        assert_eq!(
            report.statements[0].query,
            query.replace("LIMIT 25", "LIMIT $1")
        );
        let finding = heavy_on(&report, "public.plan_orders")
            .unwrap_or_else(|| panic!("{path}: {:?}", report.findings));
        let index = finding.index.as_ref().expect("an index proposal");
        assert_eq!(index.table, "public.plan_orders", "{path}");
        assert_eq!(index.columns, vec![column.to_string()], "{path}");
        assert_eq!(
            index.statement,
            format!("CREATE INDEX CONCURRENTLY ON public.plan_orders ({column});")
        );
        assert_eq!(index.verified, Some(true), "{path}");
        let json = pgcost::render::json(&report);
        assert!(json.contains("\"verified\": true"), "{json}");
        // The plan's shape scans the orders; the customers' finding, if any, is not
        // given the orders' index.
        let shape = report.statements[0].plan_shape.as_ref().expect("a shape");
        assert!(
            shape.contains(&"Seq Scan on public.plan_orders".to_string()),
            "{path}: {shape:?}"
        );
        if let Some(customers) = heavy_on(&report, "public.plan_customers") {
            assert!(customers.index.is_none(), "{path}: {customers:?}");
        }
    }

    // The look-alike sorted by its primary key: no scan, no finding, no proposal.
    let clean = support::audit(&db, app.url("/plans/join-indexed"), &ARGS).await;
    assert_valid(&clean);
    assert_eq!(clean.per_request.rows_returned, Some(25.0));
    assert!(
        (clean.findings.iter()).all(|f| f.kind != FindingKind::SeqScanHeavy && f.index.is_none()),
        "{:?}",
        clean.findings
    );
    let shape = clean.statements[0].plan_shape.as_ref().expect("a shape");
    assert!(
        shape.contains(&"Index Scan using plan_orders_pkey on public.plan_orders".to_string()),
        "{shape:?}"
    );
    assert!(
        !shape.iter().any(|n| n.starts_with("Seq Scan")),
        "{shape:?}"
    );
}

/// Issue 42: the findings are judged by the plan that ran. A Rails-style page whose runs
/// are custom plans that scan (its generic plan reads an index) gets the sort key's index,
/// verified by hypopg with the rows read before and after; a real SubPlan is one
/// `per_row_subquery`; TypeORM's derived-table page, with no SubPlan, none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn findings_are_judged_by_the_plan_that_ran() {
    use support::fixture::rails_updated_on as ran;
    let db = TestDb::start().await;
    let app_db = db.connect(support::DB).await;
    app_db.batch_execute(ran::SCHEMA).await.unwrap();
    app_db.batch_execute(ran::ANALYZE).await.unwrap();
    app_db
        .batch_execute("CREATE EXTENSION hypopg")
        .await
        .unwrap();
    let app = Fixture::start(&db.url(), 2).await;

    let rails = support::audit(&db, app.url("/ran/rails-issues"), &ARGS).await;
    assert_valid(&rails);
    assert_eq!(rails.per_request.rows_returned, Some(25.0));
    assert_eq!(rails.per_request.rows_read, ran::ISSUES as f64);
    let finding =
        heavy_on(&rails, "public.ran_issues").unwrap_or_else(|| panic!("{:#?}", rails.findings));
    assert_eq!(finding.query.as_deref(), Some(ran::ISSUES_PAGE));
    let index = finding.index.as_ref().expect("an index proposal");
    assert_eq!(
        index.statement,
        "CREATE INDEX CONCURRENTLY ON public.ran_issues (updated_on);"
    );
    assert_eq!(index.verified, Some(true));
    // EXPLAIN's estimates: the whole table, then 6,000 × 25 / 5,700 read backwards.
    assert_eq!(index.estimated_rows_read_before, Some(ran::ISSUES as f64));
    assert_eq!(index.estimated_rows_read_after, Some(26.0));
    let with_index = index.plan_with_index.as_deref().expect("the plan with it");
    assert!(
        with_index.contains("btree_ran_issues_updated_on"),
        "{with_index}"
    );
    // The generic plan reads the project's index; the custom plan, shown after it with
    // the project's most common value and the measured rows per call, scans.
    let plan = finding.plan.as_deref().expect("a plan");
    let (generic, custom) = plan.split_once("Custom plan").expect("a custom plan");
    assert!(
        generic.contains("Index Scan using ran_issues_project_id"),
        "{plan}"
    );
    assert!(!generic.contains("Seq Scan"), "{plan}");
    assert!(custom.contains("EXECUTE with ('1', '25')"), "{plan}");
    assert!(custom.contains("Seq Scan on ran_issues"), "{plan}");
    let text =
        pgcost::render::View::render(&rails, pgcost::render::format::Format::Markdown).unwrap();
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("6000 before, 26 with it"), "{text}");

    let subplan = support::audit(&db, app.url("/ran/subplan-page"), &ARGS).await;
    assert_valid(&subplan);
    let per_row: Vec<_> = (subplan.findings.iter())
        .filter(|f| f.kind == FindingKind::PerRowSubquery)
        .collect();
    assert_eq!(per_row.len(), 1, "{:#?}", subplan.findings);
    assert_eq!(per_row[0].query.as_deref(), Some(ran::SUBPLAN_PAGE));
    assert_eq!(per_row[0].table.as_deref(), Some("public.ran_comments"));
    assert_eq!(
        per_row[0].evidence["seq_scans_per_request"],
        ran::POSTS_PER_PAGE as f64
    );
    assert_eq!(per_row[0].evidence["tables"], 1.0);

    let derived = support::audit(&db, app.url("/ran/typeorm-derived-page"), &ARGS).await;
    assert_valid(&derived);
    assert_eq!(derived.per_request.rows_returned, Some(25.0));
    assert!(
        (derived.findings.iter()).all(|f| f.kind != FindingKind::PerRowSubquery),
        "{:#?}",
        derived.findings
    );
    let shape = derived.statements[0].plan_shape.as_ref().expect("a shape");
    assert!(!shape.iter().any(|n| n.contains("SubPlan")), "{shape:?}");
}
