//! Real deployments: a least-privilege role, and faults that must never hang nor produce
//! a number reported as valid.

mod support;

use support::{pgcost, run_blocking};

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use predicates::prelude::*;
use support::fixture::Fixture;
use support::{ITEMS, TestDb};

fn json(assert: &assert_cmd::assert::Assert) -> serde_json::Value {
    serde_json::from_slice(&assert.get_output().stdout).expect("a JSON report on stdout")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_smallest_role_audits_and_only_reads() {
    let db = TestDb::start().await;
    let admin = db.connect("postgres").await;
    admin
        .batch_execute(
            "CREATE ROLE auditor LOGIN;
             GRANT CONNECT ON DATABASE app, postgres TO auditor;
             GRANT pg_read_all_stats TO auditor;
             CREATE ROLE nosy LOGIN;
             GRANT CONNECT ON DATABASE app, postgres TO nosy;",
        )
        .await
        .unwrap();
    let app = Fixture::start(&db.url(), 4).await;
    // Audits the pooled /scan endpoint connected as `role`; the run must be valid.
    let audit_as = |role: &str| {
        let mut cmd = pgcost();
        cmd.args([
            "audit",
            "-n",
            "40",
            "-c",
            "4",
            "--format",
            "json",
            "--url",
            &app.url("/scan"),
        ])
        .arg("--db")
        .arg(format!(
            "postgres://{role}@127.0.0.1:{}/app",
            db.cluster.port
        ));
        json(&run_blocking(cmd).code(0))
    };

    let report = audit_as("auditor");
    assert_eq!(report["per_request"]["rows_read"], ITEMS as f64);
    assert_eq!(report["per_request"]["statements"], 1.0);
    assert_eq!(
        report["statements"][0]["query"],
        "SELECT id, owner, name FROM items"
    );
    assert_eq!(report["target"]["stats_source"], "admin");
    // EXPLAIN needs SELECT on the tables: the plans are skipped, with one note naming the
    // GRANT.
    assert!(report["statements"][0]["plan"].is_null());
    let notes: Vec<&str> = (report["warnings"].as_array().unwrap().iter())
        .filter_map(|w| w.as_str())
        .filter(|w| w.starts_with("plans skipped"))
        .collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("GRANT pg_read_all_data TO auditor") && notes[0].contains("--no-plans"),
        "{}",
        notes[0]
    );

    // Everything pgcost ran as its role: SELECTs, nothing else (and the read-only,
    // rolled-back transaction a plan is fetched in).
    let rows = admin
        .query(
            "SELECT query FROM pg_stat_statements WHERE userid = 'auditor'::regrole",
            &[],
        )
        .await
        .unwrap();
    assert!(!rows.is_empty());
    for row in rows {
        let query: String = row.get(0);
        let body: String = query
            .lines()
            .filter(|l| !l.trim_start().starts_with("--") && !l.trim().is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        let body = body
            .trim_start_matches("/* pgcost */")
            .trim_start()
            .to_ascii_uppercase();
        assert!(
            body.starts_with("SELECT")
                || body.starts_with("SET")
                || body.starts_with("BEGIN READ ONLY")
                || body.starts_with("ROLLBACK"),
            "pgcost ran: {query}"
        );
        for forbidden in [
            "PG_STAT_RESET",
            "PG_STAT_STATEMENTS_RESET",
            "CREATE ",
            "DROP ",
            "INSERT ",
            "UPDATE ",
            "DELETE ",
        ] {
            assert!(!body.contains(forbidden), "pgcost ran: {query}");
        }
    }

    // Without pg_read_all_stats: totals stay exact, and the warning names the GRANT.
    let report = audit_as("nosy");
    assert_eq!(report["per_request"]["statements"], 1.0);
    let warnings = report["warnings"].to_string();
    assert!(
        warnings.contains("GRANT pg_read_all_stats TO nosy"),
        "{warnings}"
    );
}

/// A keep-alive HTTP server that answers 204 until it has answered `lives` requests, then
/// drops every connection and stops listening: an API dying mid-burst.
fn mortal_server(lives: u64) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let served = Arc::new(AtomicU64::new(0));
    let dead = Arc::new(AtomicBool::new(false));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            if dead.load(Ordering::SeqCst) {
                break;
            }
            let Ok(mut stream) = stream else { break };
            let (served, dead) = (served.clone(), dead.clone());
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let mut pending = Vec::new();
                loop {
                    if dead.load(Ordering::SeqCst) {
                        return;
                    }
                    let Ok(n) = stream.read(&mut buf) else { return };
                    if n == 0 {
                        return;
                    }
                    pending.extend_from_slice(&buf[..n]);
                    while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                        pending.drain(..end + 4);
                        if served.fetch_add(1, Ordering::SeqCst) >= lives {
                            dead.store(true, Ordering::SeqCst);
                            return;
                        }
                        let _ = stream.write_all(b"HTTP/1.1 204 No Content\r\n\r\n");
                    }
                }
            });
        }
    });
    port
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_are_reported_not_measured() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 2).await;

    // The API dies after 60 of 10 warm-up + 200 measured requests.
    let port = mortal_server(60);
    let started = Instant::now();
    let mut cmd = pgcost();
    cmd.args([
        "audit", "-n", "200", "-c", "4", "--warmup", "10", "--format", "json",
    ])
    .args([
        "--timeout",
        "2s",
        "--db",
        &db.url(),
        "--url",
        &format!("http://127.0.0.1:{port}/x"),
    ]);
    let assert = run_blocking(cmd).code(3);
    let report = json(&assert);
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(report["valid"], false);
    assert_eq!(report["load"]["status"]["204"], 50);
    let errors: u64 = report["load"]["errors"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(errors, 150, "{}", report["load"]["errors"]);
    let failed = support::invalid(&report, "requests_failed");
    assert!(failed.contains("150 of 200 requests failed"), "{failed}");

    // A slow target: --timeout is honoured and timed-out requests are errors.
    let started = Instant::now();
    let mut cmd = pgcost();
    cmd.args([
        "audit",
        "-n",
        "4",
        "-c",
        "2",
        "--warmup",
        "0",
        "--timeout",
        "300ms",
        "--format",
        "json",
    ])
    .args(["--db", &db.url(), "--url", &app.url("/slow")]);
    let assert = run_blocking(cmd).code(3);
    let report = json(&assert);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(report["load"]["errors"]["timeout"], 4);
    assert_eq!(report["invalid_reasons"][0]["code"], "requests_failed");
    let failed = report["invalid_reasons"][0]["message"].as_str().unwrap();
    assert!(failed.contains("4 timeout"), "{failed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evicted_statements_invalidate_the_report() {
    let db = TestDb::start_with(&[("pg_stat_statements.max", "100")]).await;
    let app = Fixture::start(&db.url(), 2).await;
    let mut cmd = pgcost();
    cmd.args(["audit", "-n", "300", "-c", "2", "--format", "json"])
        .args(["--db", &db.url(), "--url", &app.url("/distinct")]);
    let assert = run_blocking(cmd).code(3);
    let report = json(&assert);
    let evicted = support::invalid(&report, "statements_evicted");
    assert!(evicted.contains("evicted entries"), "{evicted}");
    assert!(
        evicted.contains("rows_returned"),
        "the reason names the affected figures: {evicted}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn losing_the_admin_connection_while_settling_is_one_clear_error() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 2).await;
    let admin = db.connect("postgres").await;
    let mut cmd = pgcost();
    cmd.args(["audit", "-n", "20", "-c", "2"]).args([
        "--db",
        &db.url(),
        "--url",
        &app.url("/scan"),
    ]);
    let handle = std::thread::spawn(move || cmd.assert());
    // The pooled app keeps pgcost settling for about ten seconds: cut its admin connection.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut killed = false;
    while !killed && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let rows = admin
            .query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE application_name = 'pgcost' AND datname = 'postgres'",
                &[],
            )
            .await
            .unwrap();
        killed = !rows.is_empty();
    }
    assert!(killed, "never saw pgcost's admin connection");
    handle
        .join()
        .unwrap()
        .code(2)
        .stderr(predicate::str::contains("lost the database connection"))
        .stderr(predicate::str::contains("panicked").not());
}

#[test]
fn sigint_during_the_burst_prints_a_partial_invalid_report() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (db, app) = runtime.block_on(async {
        let db = TestDb::start().await;
        let app = Fixture::start(&db.url(), 2).await;
        (db, app)
    });
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_pgcost"))
        .args([
            "audit", "-n", "50", "-c", "2", "--warmup", "0", "--format", "json",
        ])
        .args(["--db", &db.url(), "--url", &app.url("/slow")])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(3000));
    let started = Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?} to stop",
        started.elapsed()
    );
    assert_eq!(
        output.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    support::assert_schema("audit", &String::from_utf8_lossy(&output.stdout));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["valid"], false);
    let stopped = support::invalid(&report, "interrupted");
    let reasons = report["invalid_reasons"].to_string();
    assert!(reasons.contains("stopped after"), "{stopped} {reasons}");
    drop(app);
    drop(db);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_inside_the_window_is_named() {
    let db = Arc::new(TestDb::start().await);
    let app = Fixture::start(&db.url(), 2).await;
    let argv = [
        "pgcost",
        "audit",
        "-n",
        "100",
        "-c",
        "2",
        "--quiet",
        "--url",
        &app.url("/scan"),
        "--db",
        &db.url(),
    ];
    let pgcost::flags::Command::Audit(args) =
        <pgcost::flags::Cli as clap::Parser>::parse_from(argv).command
    else {
        unreachable!()
    };
    let config = pgcost::config::AuditConfig::from_args(&args, &|_: &str| None).unwrap();
    let audit = tokio::spawn(async move {
        pgcost::measure::run(
            &config,
            &pgcost::progress::Progress::hidden(),
            Arc::new(AtomicBool::new(false)),
        )
        .await
    });
    // Once the burst is over (pg_stat_statements counts at once), restart the server while
    // pgcost waits for the idle pool's counters.
    let watcher = db.connect("postgres").await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let calls: i64 = watcher
            .query_one(
                "SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements \
                 WHERE query = 'SELECT id, owner, name FROM items'",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        if calls >= 120 {
            break;
        }
        assert!(Instant::now() < deadline, "the burst never finished");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let cluster = db.clone();
    tokio::task::spawn_blocking(move || cluster.cluster.restart().unwrap())
        .await
        .unwrap();
    let report = audit
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("{}: {:?}", e.message, e.hint));
    assert!(!report.valid);
    let restarted = support::reason(&report, support::Code::ServerRestarted);
    assert!(
        restarted.contains("the server restarted during the window"),
        "{restarted}"
    );
}
