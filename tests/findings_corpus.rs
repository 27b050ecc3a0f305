//! The labelled findings corpus: clean endpoints must produce no finding at all, and each
//! waste endpoint must get its kind as its first finding. Precision and recall over the
//! corpus are printed, and both must be 100%. The endpoints are measured in one sequence
//! of shared settle waits (N + 1 waits for N endpoints). The held-out part
//! ([`HELD_OUT`]) follows: endpoints the rules of issue 34 were not tuned on, judged per
//! kind, with the misses known at the time of writing listed and asserted as misses.

mod support;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use pgcost_core::findings::FindingKind;
use pgcost_core::report::Report;
use support::fixture::{Fixture, corpus, held_out, kinds, orm_shapes};
use support::{DB, TestDb};

/// Each endpoint of the corpus: method, path, and the kind its first finding must have
/// (None: no finding at all).
const CORPUS: &[(&str, &str, Option<FindingKind>)] = &[
    ("GET", "/corpus/page-with-count", None),
    ("GET", "/corpus/detail", None),
    ("GET", "/corpus/session-and-user", None),
    ("POST", "/corpus/audit-insert", None),
    ("GET", "/corpus/batch-load", None),
    ("GET", "/corpus/session-touch-guarded", None),
    ("GET", "/corpus/sorted-report-in-memory", None),
    ("GET", "/kinds/eager-states", None),
    ("GET", "/kinds/page-json", None),
    ("GET", "/kinds/rare-ping", None),
    ("GET", "/kinds/transaction-two-reads", None),
    ("GET", "/orm/django-prefetch", None),
    ("GET", "/orm/rails-includes-one-key", None),
    ("POST", "/kinds/transaction-read-write", None),
    (
        "GET",
        "/perms-naive",
        Some(FindingKind::CollectionToBoolean),
    ),
    (
        "GET",
        "/corpus/count-twice",
        Some(FindingKind::RepeatedStatement),
    ),
    ("GET", "/n-plus-one", Some(FindingKind::NPlusOne)),
    (
        "GET",
        "/corpus/connection-per-request",
        Some(FindingKind::ConnectionPerRequest),
    ),
    ("GET", "/php-like", Some(FindingKind::ConnectionPerRequest)),
    (
        "GET",
        "/corpus/seven-lookups",
        Some(FindingKind::RoundTrips),
    ),
    (
        "GET",
        "/corpus/reference-read",
        Some(FindingKind::CacheCandidate),
    ),
    (
        "GET",
        "/corpus/unindexed-filter",
        Some(FindingKind::SeqScanHeavy),
    ),
    (
        "GET",
        "/corpus/unindexed-page",
        Some(FindingKind::SeqScanHeavy),
    ),
    (
        "GET",
        "/corpus/session-touch",
        Some(FindingKind::WritesOnRead),
    ),
    (
        "GET",
        "/corpus/sorted-report",
        Some(FindingKind::SpillsToDisk),
    ),
    (
        "GET",
        "/kinds/checkout-ping",
        Some(FindingKind::CheckoutPing),
    ),
    (
        "GET",
        "/kinds/transaction-single-read",
        Some(FindingKind::TransactionAroundSingleRead),
    ),
    ("GET", "/kinds/overfetch", Some(FindingKind::Overfetch)),
    (
        "GET",
        "/kinds/duplicate-load",
        Some(FindingKind::DuplicateLoad),
    ),
    (
        "GET",
        "/orm/typeorm-set-per-checkout",
        Some(FindingKind::SessionSetupPerCheckout),
    ),
    (
        "GET",
        "/orm/knex-count-per-page",
        Some(FindingKind::CountPerPage),
    ),
    (
        "GET",
        "/orm/django-subquery-annotation",
        Some(FindingKind::PerRowSubquery),
    ),
];

/// The audit configuration of `pgcost audit -X METHOD --url URL ...` against this cluster.
fn config(db: &TestDb, method: &str, url: String) -> pgcost::config::AuditConfig {
    let db_url = db.url();
    let mut argv = vec![
        "pgcost", "audit", "--url", &url, "--db", &db_url, "--quiet", "-X", method, "-n", "40",
        "-c", "2",
    ];
    if method != "GET" {
        argv.push("--allow-writes");
    }
    let pgcost::flags::Command::Audit(args) =
        <pgcost::flags::Cli as clap::Parser>::parse_from(argv).command
    else {
        unreachable!("argv starts with audit")
    };
    pgcost::config::AuditConfig::from_args(&args, &|_: &str| None).unwrap()
}

fn kinds(report: &Report) -> Vec<FindingKind> {
    report.findings.iter().map(|f| f.kind).collect()
}

/// The figure `name` of the first finding.
fn first_evidence(report: &Report, name: &str) -> f64 {
    report.findings[0].evidence[name]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_labelled_corpus_is_judged_at_full_precision_and_recall() {
    let db = TestDb::start().await;
    let setup = db.connect(DB).await;
    setup.batch_execute(corpus::SCHEMA).await.unwrap();
    setup.batch_execute(kinds::SCHEMA).await.unwrap();
    setup.batch_execute(orm_shapes::SCHEMA).await.unwrap();
    setup.batch_execute(held_out::SCHEMA).await.unwrap();
    setup
        .batch_execute(orm_shapes::HELD_OUT_SCHEMA)
        .await
        .unwrap();
    // Sizes in pg_class, which the findings judge tables by.
    setup.batch_execute("VACUUM ANALYZE").await.unwrap();
    let app = Fixture::start(&db.url(), 4).await;
    let configs: Vec<_> = CORPUS
        .iter()
        .map(|(method, path, _)| config(&db, method, app.url(path)))
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let hidden = pgcost::progress::Progress::hidden();
    let reports = pgcost::measure::run_sequence(&configs, &hidden, stop, |_| {})
        .await
        .unwrap_or_else(|e| panic!("corpus run failed: {} ({:?})", e.message, e.hint));
    assert_eq!(reports.len(), CORPUS.len());

    let (mut true_positives, mut false_positives, mut false_negatives) = (0, 0, 0);
    println!(
        "{:<34} {:<31} {:<31} all findings",
        "endpoint", "expected", "first"
    );
    for ((_, path, expected), report) in CORPUS.iter().zip(&reports) {
        assert!(report.valid, "{path}: {:?}", report.invalid_reasons);
        let first = report.findings.first().map(|f| f.kind);
        let name = |k: Option<FindingKind>| k.map_or("clean".to_string(), |k| k.to_string());
        println!(
            "{path:<34} {:<31} {:<31} {:?}",
            name(*expected),
            name(first),
            kinds(report)
        );
        match (expected, first) {
            (Some(e), Some(f)) if *e == f => true_positives += 1,
            (Some(_), Some(_)) => {
                false_positives += 1;
                false_negatives += 1;
            }
            (Some(_), None) => false_negatives += 1,
            (None, Some(_)) => false_positives += 1,
            (None, None) => {}
        }
    }
    let ratio = |hits: usize, misses: usize| hits as f64 / (hits + misses).max(1) as f64;
    let precision = ratio(true_positives, false_positives);
    let recall = ratio(true_positives, false_negatives);
    println!(
        "precision {:.0}% ({true_positives} of {} flagged), recall {:.0}% ({true_positives} of {} waste endpoints)",
        precision * 100.0,
        true_positives + false_positives,
        recall * 100.0,
        true_positives + false_negatives
    );
    for ((_, path, expected), report) in CORPUS.iter().zip(&reports) {
        if expected.is_none() {
            assert!(report.findings.is_empty(), "{path}: {:#?}", report.findings);
        }
    }
    assert_eq!((precision, recall), (1.0, 1.0));
    check_evidence(&reports);
    check_table_view(&reports);
    check_orm_shapes(&|path| &reports[CORPUS.iter().position(|(_, p, _)| *p == path).unwrap()]);
    judge_held_out(&db, &app).await;
}

/// The evidence of issue 34's kinds on the ORM shapes, known by construction.
fn check_orm_shapes<'a>(at: &impl Fn(&str) -> &'a Report) {
    let setup = &at("/orm/typeorm-set-per-checkout").findings[0];
    // Two settings on each of two checkouts.
    assert_eq!(setup.saves_per_request.statements, 4.0);
    assert_eq!(setup.evidence["distinct_settings"], 2.0);
    assert!(setup.suggestion.contains("ALTER ROLE"));
    let count = &at("/orm/knex-count-per-page").findings[0];
    assert_eq!(count.table.as_deref(), Some("public.orm_orders"));
    let counted = count.evidence["counted_rows_read_per_request"];
    let open = orm_shapes::OPEN_ORDERS as f64;
    assert!(counted >= open / 2.0 - 25.0 && counted <= open, "{counted}");
    let per_row = &at("/orm/django-subquery-annotation").findings[0];
    assert_eq!(per_row.table.as_deref(), Some("public.orm_comments"));
    assert_eq!(
        per_row.evidence["seq_scans_per_request"],
        orm_shapes::COMMENT_SCANS as f64
    );
    assert!(per_row.saves_per_request.rows_read > 5000.0);
}

/// The held-out endpoints and the kinds each should get, in any order (none: clean).
const HELD_OUT: &[(&str, &str, &[FindingKind])] = &[
    (
        "GET",
        "/held-out/knex-articles",
        &[FindingKind::CountPerPage],
    ),
    ("GET", "/held-out/typeorm-tasks", &[]),
    (
        "GET",
        "/held-out/typeorm-subquery-count",
        &[FindingKind::PerRowSubquery],
    ),
    (
        "GET",
        "/held-out/reset-per-checkout",
        &[
            FindingKind::SessionSetupPerCheckout,
            FindingKind::CacheCandidate,
        ],
    ),
    (
        "GET",
        "/held-out/sqlalchemy-paginate",
        &[FindingKind::CountPerPage],
    ),
    (
        "GET",
        "/held-out/sequelize-role-permissions",
        &[FindingKind::CollectionToBoolean],
    ),
    (
        "GET",
        "/held-out/django-self-semi-join",
        &[FindingKind::SeqScanHeavy, FindingKind::CountPerPage],
    ),
    // Its waste is planning time: planning_dominates needs pg_stat_statements.track_planning,
    // off on this cluster (tests/planning.rs turns it on).
    ("GET", "/held-out/sqlalchemy-joinedload", &[]),
    ("GET", "/held-out/rails-token-and-page", &[]),
    ("GET", "/held-out/rails-includes-labels", &[]),
    (
        "GET",
        "/held-out/rails-counter-subquery",
        &[FindingKind::PerRowSubquery],
    ),
    ("POST", "/held-out/set-local-in-write", &[]),
    ("GET", "/held-out/join-per-row", &[]),
    // Issue 42's shapes (tests/support/fixture/orm_shapes.rs), written before its rules.
    ("GET", "/held-out/typeorm-workflow-list", &[]),
    ("GET", "/held-out/typeorm-api-key", &[]),
    (
        "GET",
        "/held-out/typeorm-api-key-scopes",
        &[FindingKind::CollectionToBoolean],
    ),
    (
        "GET",
        "/held-out/subplan-comment-count",
        &[FindingKind::PerRowSubquery],
    ),
    ("GET", "/held-out/django61-device-list", &[]),
    // The tenant's status, read by the token's tenant on every request from a tiny table
    // nothing writes, is what the demo's cached pipeline caches.
    (
        "GET",
        "/held-out/tenant-token-page",
        &[FindingKind::RoundTrips, FindingKind::CacheCandidate],
    ),
];

/// Measures the held-out endpoints and prints precision and recall per kind: a kind found
/// where it is expected is a hit, found where it is not a false positive, missing where it
/// is expected a false negative. The wrong (endpoint, kind) pairs must be the known ones.
async fn judge_held_out(db: &TestDb, app: &Fixture) {
    let configs: Vec<_> = HELD_OUT
        .iter()
        .map(|(method, path, _)| config(db, method, app.url(path)))
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let hidden = pgcost::progress::Progress::hidden();
    let reports = pgcost::measure::run_sequence(&configs, &hidden, stop, |_| {})
        .await
        .unwrap_or_else(|e| panic!("held-out run failed: {} ({:?})", e.message, e.hint));
    let mut tally: std::collections::BTreeMap<FindingKind, (u32, u32, u32)> = Default::default();
    let mut wrong = Vec::new();
    for ((_, path, expected), report) in HELD_OUT.iter().zip(&reports) {
        assert!(report.valid, "{path}: {:?}", report.invalid_reasons);
        let found = kinds(report);
        println!("{path:<40} expected {expected:?} found {found:?}");
        wrong.extend(misplaced(path, report));
        for kind in FindingKind::ALL {
            let entry = tally.entry(kind).or_default();
            match (expected.contains(&kind), found.contains(&kind)) {
                (true, true) => entry.0 += 1,
                (false, true) => {
                    entry.1 += 1;
                    wrong.push(format!("{path}: {kind} false positive"));
                }
                (true, false) => {
                    entry.2 += 1;
                    wrong.push(format!("{path}: {kind} missed"));
                }
                (false, false) => {}
            }
        }
    }
    for (kind, (hits, false_positives, misses)) in &tally {
        if hits + false_positives + misses > 0 {
            println!(
                "held-out {kind:<28} precision {hits}/{} recall {hits}/{}",
                hits + false_positives,
                hits + misses
            );
        }
    }
    wrong.sort();
    assert_eq!(wrong, KNOWN_HELD_OUT_ERRORS, "the held-out part changed");
}

/// What the held-out part checks beyond the kinds: one finding per statement to fix, and
/// a lookup keyed by the token never listed among the page's batch loads.
fn misplaced(path: &str, report: &Report) -> Vec<String> {
    let mut wrong = Vec::new();
    let mut per_statement = std::collections::BTreeMap::<(FindingKind, &str), usize>::new();
    for f in &report.findings {
        *per_statement
            .entry((f.kind, f.query.as_deref().unwrap_or("")))
            .or_default() += 1;
    }
    for ((kind, _), n) in per_statement {
        if n > 1 && kind == FindingKind::PerRowSubquery {
            wrong.push(format!("{path}: {kind} {n} findings for one statement"));
        }
    }
    let batch_loads = |advice: &str| {
        let at = advice.find("Batch loads keyed by the page")?;
        let rest = &advice[at..];
        Some(rest[..rest.find("\n\n").unwrap_or(rest.len())].to_string())
    };
    for f in report.findings.iter() {
        if f.kind == FindingKind::RoundTrips
            && batch_loads(&f.suggestion).is_some_and(|b| b.contains("FROM tenants"))
        {
            wrong.push(format!("{path}: tenant lookup listed as a batch load"));
        }
    }
    wrong
}

/// What the rules get wrong on the held-out part, each with its reason; a fix removes its
/// line. When first judged, before any tuning, there were three more:
/// - `django-self-semi-join: per_row_subquery false positive` (its `IN (SELECT …)` is a
///   semi-join, not a per-row subquery);
/// - `knex-articles: seq_scan_heavy false positive` (the count's sequential scan of half
///   the table was named twice, with an index proposed where count_per_page's remedy fits);
/// - `sequelize-role-permissions: collection_to_boolean missed` (the auth step's
///   `IN ($1, $2)` was taken for a batch load; with no page to feed its keys, it is not).
///
/// Issue 42's shapes had four more before its rules changed:
/// - `django61-device-list: cache_candidate false positive` (its row-constructor batch
///   loads, `("dcim_rack"."id") IN (($1), ($2))`, were not taken for lists of keys);
/// - `tenant-token-page: cache_candidate missed` and `tenant lookup listed as a batch load`
///   (the tenant, keyed by the token, was taken for a batch load because the page carries
///   `tenant_id`; the page is filtered by it, so the tenant came first);
/// - `typeorm-api-key-scopes: collection_to_boolean missed` (the role's 186 scopes were
///   exempt as rows about the 100 items the response lists);
/// - `typeorm-workflow-list: per_row_subquery false positive` and `2 findings for one
///   statement` (`shared_workflow`, probed by the plans' nested loops and named twice per
///   statement, and the DISTINCT's derived table were taken for per-row subqueries; the
///   rule now reads the plan's SubPlans, and that plan has none).
const KNOWN_HELD_OUT_ERRORS: &[&str] = &[
    // The document read by its id is the handler's object, not reference data: nothing in
    // the counters tells it from a lookup of fixed data.
    "/held-out/sequelize-role-permissions: cache_candidate false positive",
    // An 8-table join by one key of never-written tiny tables: its waste is planning time
    // (planning_dominates, with track_planning on), and caching it is not the advice.
    "/held-out/sqlalchemy-joinedload: cache_candidate false positive",
];

/// The figures behind the findings are about the statement they name.
fn check_evidence(reports: &[Report]) {
    let at = |path: &str| {
        let i = CORPUS.iter().position(|(_, p, _)| *p == path).unwrap();
        &reports[i]
    };
    let filter = at("/corpus/unindexed-filter");
    assert_eq!(
        first_evidence(filter, "seq_rows_read_per_request"),
        corpus::EVENTS as f64
    );
    assert_eq!(first_evidence(filter, "rows_returned_per_request"), 5.0);
    let page = at("/corpus/unindexed-page");
    assert_eq!(
        first_evidence(page, "seq_rows_read_per_request"),
        corpus::EVENTS as f64
    );
    assert_eq!(first_evidence(page, "rows_returned_per_request"), 25.0);
    assert_eq!(
        page.findings[0].saves_per_request.rows_read,
        (corpus::EVENTS - 25) as f64
    );
    assert!(page.findings[0].suggestion.contains("ORDER BY columns"));

    let twice = &at("/corpus/count-twice").findings[0];
    assert_eq!(twice.saves_per_request.statements, 1.0);
    assert_eq!(twice.evidence["parameters"], 0.0);
    assert!(twice.suggestion.contains("paginator"));
    // Two new connections per request, each with its set-up of seven statements: the
    // finding saves all of them, and the set-up gets no finding of its own.
    let php = at("/php-like");
    assert_eq!(kinds(php), [FindingKind::ConnectionPerRequest]);
    let setup_statements = 2.0 * support::fixture::php_like::SETUP_STATEMENTS as f64;
    assert_eq!(
        php.findings[0].saves_per_request.statements,
        setup_statements
    );
    let lookups = &at("/corpus/seven-lookups").findings[0];
    assert_eq!(lookups.saves_per_request.statements, 6.0);
    let loop_ = &at("/n-plus-one").findings[0];
    assert_eq!(
        loop_.saves_per_request.statements,
        (support::SMALL - 1) as f64
    );
    check_new_kinds(&at);
    let perms = &at("/perms-naive").findings[0];
    let set = (support::GROUPS * support::GRANTS_PER_GROUP + 1) as f64;
    assert_eq!(perms.saves_per_request.rows_returned, set - 1.0);
    assert!(perms.suggestion.contains("SELECT EXISTS (SELECT 1 FROM"));
}

/// The evidence of the plumbing and page kinds, known by construction.
fn check_new_kinds<'a>(at: &impl Fn(&str) -> &'a Report) {
    let ping = at("/kinds/checkout-ping");
    assert_eq!(kinds(ping), [FindingKind::CheckoutPing]);
    assert_eq!(ping.findings[0].saves_per_request.statements, 1.0);
    let tx = &at("/kinds/transaction-single-read").findings;
    assert_eq!(tx.len(), 1, "{tx:#?}");
    assert_eq!(tx[0].saves_per_request.statements, 2.0);
    assert_eq!(tx[0].evidence["reads_per_transaction"], 1.0);
    let over = at("/kinds/overfetch");
    assert_eq!(over.load.response_items, Some(kinds::SHOWN as u64));
    assert_eq!(kinds(over), [FindingKind::Overfetch]);
    let fetched = kinds::FETCHED as f64;
    assert_eq!(over.findings[0].evidence["rows_per_call"], fetched);
    assert_eq!(
        over.findings[0].saves_per_request.rows_returned,
        fetched - kinds::SHOWN as f64
    );
    let eager = at("/kinds/eager-states");
    assert_eq!(eager.load.response_items, Some(kinds::PAGE as u64));
    assert_eq!(at("/kinds/page-json").load.response_items, Some(25));
    assert_eq!(at("/corpus/detail").load.response_items, None, "not JSON");
    let twice = &at("/kinds/duplicate-load").findings;
    assert_eq!(twice.len(), 1, "{twice:#?}");
    assert_eq!(twice[0].table.as_deref(), Some("public.corpus_users"));
    assert_eq!(twice[0].saves_per_request.statements, 1.0);
    // The seven lookups of one event by its id load it seven times, too.
    let lookups = kinds(at("/corpus/seven-lookups"));
    assert_eq!(
        lookups,
        [FindingKind::RoundTrips, FindingKind::DuplicateLoad]
    );
}

/// The table view's findings section fits in 40 lines of 100 columns on every endpoint.
fn check_table_view(reports: &[Report]) {
    let mut worst = 0;
    for report in reports {
        let text =
            pgcost::render::View::render(report, pgcost::render::format::Format::Table).unwrap();
        let Some(at) = text.find("\nFindings (") else {
            assert!(report.findings.is_empty());
            continue;
        };
        let section: Vec<&str> = text[at + 1..]
            .lines()
            .take_while(|line| !line.starts_with("Warnings"))
            .collect();
        for line in &section {
            assert!(
                line.chars().count() <= 100,
                "wider than 100 columns: {line}"
            );
        }
        worst = worst.max(section.len());
    }
    println!("longest findings section: {worst} lines");
    assert!(worst <= 40, "{worst} lines");
}
