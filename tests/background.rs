//! Background traffic: a writer of another role, a steady stream of small transactions on
//! its own persistent connection, runs during audits of the fixture app. Without flags the
//! report warns; `--app-role` makes statements exact; `--control` subtracts the background
//! within its stated uncertainty; a background too uncertain beside the signal is refused
//! (exit 3).
//! The four cases share one cluster, each in its own database (pg_stat_database and
//! pg_stat_statements are per database), and run at once.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use pgcost_core::report::model::notes::Note;
use support::fixture::Fixture;
use support::{ITEMS, TestDb, assert_valid, pgcost, run_blocking};
use tokio_postgres::NoTls;

/// The writer's role and application name.
const WRITER_ROLE: &str = "bgwriter";
const WRITER_APP: &str = "nightly-sync";

/// A database seeded like `app`, with a one-row table the writer updates.
async fn database(db: &TestDb, name: &str) {
    db.create_seeded_database(name).await;
    let client = db.connect(name).await;
    client
        .batch_execute(&format!(
            "CREATE TABLE bg (n int NOT NULL) WITH (autovacuum_enabled = off);
             INSERT INTO bg VALUES (0);
             GRANT SELECT, UPDATE ON bg TO {WRITER_ROLE};"
        ))
        .await
        .unwrap();
}

/// The background writer: `UPDATE bg SET n = n + 1` (one transaction, one row read) every
/// `period`, on its own connection, as another role, until dropped.
struct Writer {
    task: tokio::task::JoinHandle<()>,
    transactions: Arc<AtomicU64>,
}

impl Writer {
    async fn start(db: &TestDb, name: &str, period: Duration) -> Writer {
        let url = db
            .cluster
            .url(name)
            .replace("postgres@", &format!("{WRITER_ROLE}@"));
        let url = format!("{url}?application_name={WRITER_APP}");
        let (client, connection) = tokio_postgres::connect(&url, NoTls).await.unwrap();
        tokio::spawn(connection);
        let update = client.prepare("UPDATE bg SET n = n + 1").await.unwrap();
        let transactions = Arc::new(AtomicU64::new(0));
        let counted = transactions.clone();
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(period);
            loop {
                tick.tick().await;
                client.execute(&update, &[]).await.unwrap();
                counted.fetch_add(1, Ordering::Relaxed);
            }
        });
        Writer { task, transactions }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The fixture's `/scan` on `name`: one transaction, one statement and ITEMS rows read
/// per request, exactly.
fn scan_args(n: &'static str) -> Vec<&'static str> {
    vec!["-n", n, "-c", "8", "--warmup", "80"]
}

/// `pgcost audit --url <app>/scan --db <database name> --quiet EXTRA...`, in process.
async fn audit_db(
    db: &TestDb,
    name: &str,
    app: &Fixture,
    extra: &[&str],
) -> pgcost_core::report::Report {
    let config = support::audit_config_of(&db.cluster.url(name), &app.url("/scan"), extra);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    pgcost::measure::run(&config, &pgcost::progress::Progress::hidden(), stop)
        .await
        .unwrap_or_else(|e| panic!("audit failed: {} ({:?})", e.message, e.hint))
}

/// No flags: the figures include the writer's work, and the report says so, naming it;
/// far above --max-background, it is not valid.
async fn without_flags(db: &TestDb) {
    database(db, "bg_plain").await;
    let app = Fixture::start(&db.cluster.url("bg_plain"), 8).await;
    let writer = Writer::start(db, "bg_plain", Duration::from_millis(20)).await;
    let r = audit_db(db, "bg_plain", &app, &scan_args("200")).await;
    // 50 statements a second after the burst, while pgcost sent nothing: far above 5%.
    assert!(!r.valid, "{:?}", r.per_request);
    let reason = support::reason(&r, support::Code::BackgroundTooLoud);
    assert!(reason.starts_with("background in the window"), "{reason}");
    assert!(
        reason.contains("more than --max-background 5%") && reason.contains("--control"),
        "{reason}"
    );
    assert_eq!(r.invalid_reasons.len(), 1, "{:?}", r.invalid_reasons);
    assert!(r.background.is_none(), "no flag, no section");
    let warning = (r.notes.iter().map(Note::message))
        .find(|w| w.contains("client backend(s) were active in the window"))
        .unwrap_or_else(|| panic!("no background warning in {:#?}", r.notes));
    assert!(
        warning.contains(&format!("role {WRITER_ROLE}, application \"{WRITER_APP}\"")),
        "{warning}"
    );
    assert!(warning.contains("--app-role") && warning.contains("--control"));
    // The settle waits did not wait for the writer, which never idles for 10 s.
    assert!(
        !r.settle.timed_out && r.settle.after_seconds < 12.0,
        "{:?}",
        r.settle
    );
    // What the warning is about: the writer's transactions are in the figures.
    let p = &r.per_request;
    assert!(p.transactions > 1.5, "{p:?}");
    assert!(p.statements.unwrap() > 1.5, "{p:?}");
    assert!(writer.transactions.load(Ordering::Relaxed) > 300);
}

/// `--app-role`: the app's statements only, exactly; the writer's are shown apart.
async fn app_role(db: &TestDb) {
    database(db, "bg_role").await;
    let app = Fixture::start(&db.cluster.url("bg_role"), 8).await;
    let _writer = Writer::start(db, "bg_role", Duration::from_millis(20)).await;
    let mut args = scan_args("200");
    args.extend(["--app-role", "postgres"]);
    let r = audit_db(db, "bg_role", &app, &args).await;
    assert_valid(&r);
    let p = &r.per_request;
    assert_eq!(p.statements, Some(1.0), "{p:?}");
    assert_eq!(p.rows_returned, Some(ITEMS as f64), "{p:?}");
    assert_eq!(r.statements.len(), 1, "{:?}", r.statements);
    let b = r.background.as_ref().expect("a background section");
    assert_eq!(b.app_roles, vec!["postgres".to_string()]);
    let other = &b.other_roles[0];
    assert_eq!((b.other_roles.len(), other.role.as_str()), (1, WRITER_ROLE));
    assert!(other.calls > 300, "{other:?}");
    assert_eq!(other.rows, other.calls, "one row updated per call");
    assert!(
        r.notes
            .iter()
            .map(Note::message)
            .any(|w| w.contains("outside --app-role"))
    );
    // The writer's transactions are not taken for work pg_stat_statements missed.
    let extra = r
        .notes
        .iter()
        .map(Note::message)
        .find(|w| w.starts_with("transactions exceed"));
    assert!(extra.is_none(), "{extra:?}");
}

/// `--control`: transactions, rows read and statements within the stated uncertainty of
/// the truth (1, ITEMS and 1 per request), and that uncertainty small.
async fn control(db: &TestDb) {
    database(db, "bg_control").await;
    let app = Fixture::start(&db.cluster.url("bg_control"), 8).await;
    let _writer = Writer::start(db, "bg_control", Duration::from_millis(300)).await;
    let mut args = scan_args("2000");
    args.extend(["--control", "8s"]);
    let r = audit_db(db, "bg_control", &app, &args).await;
    assert_valid(&r);
    let b = r.background.as_ref().expect("a background section");
    let (u, s) = (b.uncertainty.unwrap(), b.subtracted.unwrap());
    let p = &r.per_request;
    let report = format!("{p:?}\n{b:#?}");
    assert!(b.window_seconds.unwrap() >= 8.0, "{report}");
    let tps = b.transactions_per_second.unwrap();
    assert!((2.0..5.0).contains(&tps), "a writer every 300 ms: {report}");
    assert!(
        s.transactions.unwrap() > 0.01,
        "something was subtracted: {report}"
    );
    assert!(
        (p.transactions - 1.0).abs() <= u.transactions.unwrap(),
        "{report}"
    );
    assert!(
        (p.rows_read - ITEMS as f64).abs() <= u.rows_read.unwrap(),
        "{report}"
    );
    let statements = p.statements.unwrap();
    assert!(
        (statements - 1.0).abs() <= u.statements.unwrap(),
        "{report}"
    );
    // Not vacuous: each within 5% of the truth.
    assert!(u.transactions.unwrap() <= 0.05, "{report}");
    assert!(u.rows_read.unwrap() <= 0.05 * ITEMS as f64, "{report}");
    assert!(u.statements.unwrap() <= 0.05, "{report}");
}

/// A background louder than the signal, too uncertain beside it, and no time to size the
/// burst or the second control window (`--max-duration` spent on the first): not valid,
/// exit 3. With the default 3 minutes, pgcost raises the burst to an answer instead.
async fn too_loud(db: &TestDb) {
    database(db, "bg_loud").await;
    let app = Fixture::start(&db.cluster.url("bg_loud"), 8).await;
    let _writer = Writer::start(db, "bg_loud", Duration::from_millis(20)).await;
    let mut cmd = pgcost();
    cmd.args([
        "audit",
        "--url",
        &app.url("/scan"),
        "--quiet",
        "--format",
        "json",
    ]);
    cmd.args(["--db", &db.cluster.url("bg_loud"), "--control", "3s"]);
    cmd.args(["--max-duration", "4s"]);
    cmd.args(scan_args("200"));
    let out = tokio::task::spawn_blocking(move || run_blocking(cmd))
        .await
        .unwrap()
        .code(3);
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(json["valid"], false);
    let reason = support::invalid(&json, "background_too_uncertain");
    assert!(
        reason.contains("the background leaves transactions uncertain by")
            && reason.contains("more than 15%"),
        "{reason}"
    );
    assert!(
        json["background"]["share"]["transactions"]
            .as_f64()
            .unwrap()
            > 1.0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn background_traffic_is_named_left_out_subtracted_or_refused() {
    let db = TestDb::start().await;
    let admin = db.connect("postgres").await;
    admin
        .batch_execute(&format!("CREATE ROLE {WRITER_ROLE} LOGIN"))
        .await
        .unwrap();
    tokio::join!(
        without_flags(&db),
        app_role(&db),
        control(&db),
        too_loud(&db)
    );
    // A role the server does not know is a setup error, before anything is sent.
    let url = db.url();
    let argv = [
        "pgcost",
        "audit",
        "--url",
        "http://127.0.0.1:9/x",
        "--db",
        &url,
    ];
    let parsed = <pgcost::flags::Cli as clap::Parser>::parse_from(argv.iter().chain(&[
        "--quiet",
        "--app-role",
        "no_such_role",
    ]));
    let pgcost::flags::Command::Audit(args) = parsed.command else {
        unreachable!("an audit command line")
    };
    let config = pgcost::config::AuditConfig::from_args(&args, &|_: &str| None).unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let progress = pgcost::progress::Progress::hidden();
    let err = pgcost::measure::run(&config, &progress, stop)
        .await
        .unwrap_err();
    assert_eq!(err.exit_code(), 2, "{}", err.message);
    assert!(
        err.message
            .contains("--app-role \"no_such_role\": no such role")
    );
}

#[test]
fn ramp_does_not_take_the_background_flags_yet() {
    for flag in [["--control", "5s"], ["--app-role", "app"]] {
        pgcost()
            .args(["ramp", "--url", "http://127.0.0.1:9/x"])
            .args(["--db", "postgres://u@127.0.0.1:9/d"])
            .args(flag)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(
                "pgcost ramp does not take --app-role",
            ));
    }
}
