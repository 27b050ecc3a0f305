//! The labelled findings corpus: clean endpoints must produce no finding at all, and each
//! waste endpoint must get its kind as its first finding. Precision and recall over the
//! corpus are printed, and both must be 100%. The endpoints are measured in one sequence
//! of shared settle waits (N + 1 waits for N endpoints).

mod support;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use pgcost::cost::findings::FindingKind;
use pgcost::cost::report::Report;
use support::fixture::{Fixture, corpus, kinds};
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
];

/// The audit configuration of `pgcost audit -X METHOD --url URL ...` against this cluster.
fn config(db: &TestDb, method: &str, url: String) -> pgcost::config::AuditConfig {
    let db_url = db.url();
    let argv = [
        "pgcost", "audit", "--url", &url, "--db", &db_url, "--quiet", "-X", method, "-n", "40",
        "-c", "2",
    ];
    let pgcost::cli::Command::Audit(args) =
        <pgcost::cli::Cli as clap::Parser>::parse_from(argv).command
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
}

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
