//! `pgcost ramp` against apps whose wall is known by construction, on one cluster:
//! - app: a CPU-bound handler on a single-threaded runtime, in a child process whose pid
//!   is passed, and no database at all;
//! - pool: a pool of 2 connections, each request holding one for 5 ms (pg_sleep);
//! - database: every request updates the same row in a transaction that holds its lock
//!   for 4 ms, with a pool of 16.
//!
//! The app run also proves that sampling pg_stat_activity every 20 ms over the admin
//! connection leaves the target's counters alone: its transactions over the whole ramp
//! are exactly 0.
//!
//! Each step lasts 6 s or more: the verdict judges every change against the spread of the
//! steps' one-second samples, and a step of fewer than 5 whole seconds has none. The
//! verdicts hold on a quiet machine: on one saturated by other work the ramp says so
//! (wall `host`), and the test fails with the machine's figures printed.

mod support;

use std::net::SocketAddr;

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use deadpool_postgres::{Config, Pool, PoolConfig, Runtime};
use serde_json::Value;
use support::busy_app::{BUSY, BusyApp};
use support::{TestDb, pgcost, run_blocking, verdict};
use tokio_postgres::NoTls;

/// Serves the CPU-bound app (`support::busy_app`); run as a child process only, started
/// by [`app_wall`], never by `cargo test` itself.
#[test]
#[ignore = "the app child of the ramp test, started by it"]
fn ramp_app_child() {
    support::busy_app::serve_if_child();
}

/// `/sleep`: one pooled connection held for 5 ms. `/hot`: BEGIN; UPDATE the one row;
/// 4 ms with its lock held; COMMIT.
async fn serve_pool_app(
    db_url: &str,
    pool_size: usize,
) -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let mut cfg = Config::new();
    cfg.url = Some(db_url.to_string());
    cfg.pool = Some(PoolConfig::new(pool_size));
    let pool = cfg.create_pool(Some(Runtime::Tokio1), NoTls).unwrap();
    let router = Router::new()
        .route("/sleep", get(sleep))
        .route("/hot", get(hot))
        .with_state(pool);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (addr, server)
}

async fn sleep(State(pool): State<Pool>) -> &'static str {
    let client = pool.get().await.unwrap();
    let stmt = client
        .prepare_cached("SELECT pg_sleep(0.005)")
        .await
        .unwrap();
    client.execute(&stmt, &[]).await.unwrap();
    "slept"
}

async fn hot(State(pool): State<Pool>) -> &'static str {
    let mut client = pool.get().await.unwrap();
    let update = client
        .prepare_cached("UPDATE ramp_hot SET n = n + 1 WHERE id = 1")
        .await
        .unwrap();
    let hold = client
        .prepare_cached("SELECT pg_sleep(0.004)")
        .await
        .unwrap();
    let tx = client.transaction().await.unwrap();
    tx.execute(&update, &[]).await.unwrap();
    tx.execute(&hold, &[]).await.unwrap();
    tx.commit().await.unwrap();
    "updated"
}

/// The length of the pool and database apps' steps: 6 one-second samples each. Their
/// seconds differ by 2 to 3% on a quiet machine, and the hot row's steps past c=2, flat
/// (9% short of the 10% rule), need more than 4 of them to tell.
const STEP: [&str; 2] = ["--step-duration", "6s"];

/// Serves the pool app on `dbname` with `pool_size` connections, ramps `path` with
/// `steps` (`--steps LIST` or `--rate LIST`) of [`STEP`] each, and prints the summary;
/// ramps again while a busy machine leaves the verdict undecided, until it names `want`.
async fn ramp_pool_app(
    db: &TestDb,
    dbname: &str,
    pool_size: usize,
    path: &str,
    steps: [&str; 2],
    want: &str,
) -> (Value, String) {
    let (addr, server) = serve_pool_app(&db.cluster.url(dbname), pool_size).await;
    let url = format!("http://{addr}{path}");
    let named = verdict::until_named(want, || {
        let report = ramp(db, dbname, &url, &[steps[0], steps[1], STEP[0], STEP[1]]);
        let shown = summary(&report);
        println!("{dbname}:\n{shown}");
        (report, shown)
    });
    server.abort();
    named
}

/// Runs `pgcost ramp --format json` and parses its report.
fn ramp(db: &TestDb, dbname: &str, url: &str, extra: &[&str]) -> Value {
    let mut cmd = pgcost();
    cmd.args([
        "ramp",
        "--url",
        url,
        "--db",
        &db.cluster.url(dbname),
        "--quiet",
    ])
    .args(["--format", "json", "--warmup", "20"])
    .args(extra);
    let out = run_blocking(cmd).get_output().clone();
    assert!(
        out.status.code() == Some(0),
        "exit {:?}: {}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    support::assert_schema("ramp", &String::from_utf8_lossy(&out.stdout));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn summary(report: &Value) -> String {
    let steps: Vec<String> = report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            format!(
                "c={} rate={} late={} rps={:.0} per_second={} rps_se={} p99={:.1} stmts={} db_ms={:.2} db_ms_se={} active={:.2}/{} waits={} app={} db_cpu={} own={} host={}",
                s["concurrency"],
                s["rate"],
                s["late"],
                s["rps"].as_f64().unwrap(),
                s["spread"]["rps_per_second"],
                s["spread"]["rps"]["se"],
                s["latency_ms"]["p99"].as_f64().unwrap(),
                s["per_request"]["statements"],
                s["per_request"]["db_time_ms"].as_f64().unwrap(),
                s["spread"]["db_time_ms"]["se"],
                s["database"]["active_backends_mean"].as_f64().unwrap(),
                s["database"]["connected_backends_max"],
                s["database"]["waits"],
                s["app_cpu"],
                s["database"]["cpu_ms_per_request"],
                s["load_generator_cpu"]["share_of_usable"],
                s["host"]
            )
        })
        .collect();
    format!(
        "{}\nverdict {}\nusl {}",
        steps.join("\n"),
        report["verdict"],
        report["usl"]
    )
}

fn step_figure(report: &Value, i: usize, path: &[&str]) -> f64 {
    let mut value = &report["steps"][i];
    for key in path {
        value = &value[*key];
    }
    value
        .as_f64()
        .unwrap_or_else(|| panic!("{path:?} of step {i}: {value}"))
}

/// The CPU-bound app: wall `app`, knee at 1 or 2, its busiest thread pinned; and not one
/// transaction on the target over the whole ramp, with the sampler running. 900 requests
/// a step, about 10 s at its 90 requests per second: from c=1 to c=2 it grows a few percent
/// (the client's round trip overlaps), and with each second a few percent apart on a
/// shared machine, five seconds do not always tell that from the 10% rule.
async fn app_wall(db: &TestDb) {
    let app = BusyApp::start("ramp_app_child");
    let url = app.url();
    let pid = app.pid().to_string();
    let steps = ["--steps", "1,2,4", "--step-requests", "900", "--pid", &pid];
    let (report, shown) = verdict::until_named("app", || {
        let report = ramp(db, "ramp_app", &url, &steps);
        let shown = summary(&report);
        println!("app:\n{shown}");
        (report, shown)
    });
    let knee = report["verdict"]["knee_concurrency"].as_u64().unwrap();
    assert!(knee == 1 || knee == 2, "{shown}");
    for i in 0..3 {
        // Each request burns 10 ms of one thread's CPU, plus the HTTP work of a debug
        // build: the busiest thread's share of a core is at least the throughput times
        // 10 ms (less a tick of rounding), and it is (nearly) all the app's CPU.
        let busiest = step_figure(&report, i, &["app_cpu", "busiest_thread_share"]);
        let expected = step_figure(&report, i, &["rps"]) * BUSY.as_secs_f64();
        assert!(
            busiest >= 0.97 * expected,
            "{busiest} vs {expected}: {shown}"
        );
        assert!(
            busiest <= 1.5 * expected,
            "{busiest} vs {expected}: {shown}"
        );
        assert!(
            busiest >= 0.95 * step_figure(&report, i, &["app_cpu", "cores"]),
            "{shown}"
        );
        assert_eq!(report["steps"][i]["requests"], 900, "{shown}");
        assert_eq!(step_figure(&report, i, &["per_request", "statements"]), 0.0);
        assert_eq!(report["steps"][i]["database"]["connected_backends_max"], 0);
        assert!(
            report["steps"][i]["database"]["samples"].as_u64().unwrap() >= 5,
            "{shown}"
        );
    }
    // Saturated (c = 4, four requests queued on one thread): the busiest thread is pinned,
    // as the wall `app` says. On a machine busy with other work the scheduler may give it
    // less than a core; the identity above holds either way.
    let pinned = step_figure(&report, 2, &["app_cpu", "busiest_thread_share"]);
    assert!(pinned >= 0.90, "busiest thread {pinned}: {shown}");
    // Sampling every 20 ms over the admin connection, snapshots and settle waits: the
    // target's pg_stat_database did not move at all.
    assert_eq!(report["totals"]["transactions"], 0, "{}", report["totals"]);
    assert_eq!(report["totals"]["rows_returned"], 0, "{}", report["totals"]);
    assert_eq!(report["valid"], true);
}

/// A pool of 2, each request holding a connection for 5 ms: wall `pool`, knee at 2 or 4.
async fn pool_wall(db: &TestDb) {
    let steps = ["--steps", "1,2,4,8,16"];
    let (report, shown) = ramp_pool_app(db, "ramp_pool", 2, "/sleep", steps, "pool").await;
    let knee = report["verdict"]["knee_concurrency"].as_u64().unwrap();
    assert!(knee == 2 || knee == 4, "{shown}");
    for i in 0..5 {
        // Exactly one statement (the pg_sleep) per request, measured between steps
        // without a settle wait.
        assert_eq!(
            step_figure(&report, i, &["per_request", "statements"]),
            1.0,
            "{shown}"
        );
        assert_eq!(
            report["steps"][i]["database"]["connected_backends_max"], 2,
            "{shown}"
        );
    }
    assert_eq!(
        report["steps"][4]["database"]["active_backends_max"], 2,
        "{shown}"
    );
    assert_eq!(report["pool"]["bigger_pool_helps"], true);
    // No assertion on totals.transactions here: on PG 15+ a transaction that touches no
    // relation (SELECT pg_sleep) leaves no pending statistics entry, so its commit count
    // is published only with a later flush or when the backend exits, never by the idle
    // timer that the settle wait relies on.
}

/// Every request updates the same row and holds its lock for 4 ms, with a pool of 16:
/// wall `database`, Lock the top wait at the highest step.
async fn database_wall(db: &TestDb) {
    let setup = db.connect("ramp_hot").await;
    setup
        .batch_execute("CREATE TABLE ramp_hot (id int PRIMARY KEY, n bigint); INSERT INTO ramp_hot VALUES (1, 0)")
        .await
        .unwrap();
    drop(setup);
    let steps = ["--steps", "1,2,4,8"];
    let (report, shown) = ramp_pool_app(db, "ramp_hot", 16, "/hot", steps, "database").await;
    assert!(
        report["verdict"]["knee_concurrency"].as_u64().is_some(),
        "{shown}"
    );
    // At c=2 one request sleeps holding the lock while the other waits for it: Lock and
    // the sleep's wait tie. From c=4 on, more requests wait for the lock than hold it.
    let waits = &report["steps"][3]["database"]["waits"];
    let lock = waits["lock"].as_f64().unwrap();
    for (name, share) in waits.as_object().unwrap() {
        assert!(name == "lock" || share.as_f64().unwrap() < lock, "{shown}");
    }
    assert_eq!(report["pool"]["bigger_pool_helps"], false);
    for i in 0..4 {
        // BEGIN, UPDATE, SELECT pg_sleep, COMMIT: measured per step with no settle wait.
        assert_eq!(
            step_figure(&report, i, &["per_request", "statements"]),
            4.0,
            "{shown}"
        );
    }
    // Postgres runs on this host: its backends' CPU is read from /proc, and a request
    // costs some of it.
    for i in 0..4 {
        assert!(
            step_figure(&report, i, &["database", "cpu_ms_per_request"]) > 0.0,
            "{shown}"
        );
    }
    // One transaction per request over the whole ramp (its steps' warm-ups included),
    // from pg_stat_database after the closing settle wait.
    assert_eq!(
        report["totals"]["transactions"],
        report["totals"]["requests_sent"]
    );
}

/// The open model on the pool of 2 (about 330 requests per second at most): 100 and 200
/// per second are met, 600 is not, so the knee is at 200/s and the wall is the pool; at
/// 600/s the schedule runs ahead of the app, and latency from the schedule shows it.
/// Sampled at 20 ms, the step sees both pooled connections busy.
async fn open_model(db: &TestDb) {
    let rates = ["--rate", "100,200,600"];
    let (report, shown) = ramp_pool_app(db, "ramp_pool", 2, "/sleep", rates, "pool").await;
    assert_eq!(report["verdict"]["knee_rate"], 200.0, "{shown}");
    assert_eq!(
        report["verdict"]["knee_concurrency"],
        Value::Null,
        "{shown}"
    );
    for (i, rate) in [100.0, 200.0, 600.0].into_iter().enumerate() {
        assert_eq!(report["steps"][i]["rate"], rate, "{shown}");
        // The rate times the step's 6 s.
        assert_eq!(report["steps"][i]["requests"], 6 * rate as u64, "{shown}");
    }
    // 3600 requests due within 6 s, served at about 330/s: the app's queue for a pooled
    // connection grows all along, and the last wait seconds past their scheduled time. At
    // the rates met, pgcost itself kept the schedule: its requests started on time (at
    // most 5% late, on a busy host). At 600/s the 150 connections (a quarter of a second
    // of arrivals) all wait on the app's queue, and later requests cannot start on time.
    assert!(
        step_figure(&report, 2, &["latency_ms", "p99"]) >= 150.0,
        "{shown}"
    );
    for i in 0..2 {
        let late = step_figure(&report, i, &["late"]);
        assert!(
            late <= 0.05 * step_figure(&report, i, &["requests"]),
            "{shown}"
        );
    }
    assert!(step_figure(&report, 2, &["rps"]) < 0.9 * 600.0, "{shown}");
    assert!(step_figure(&report, 0, &["rps"]) >= 0.9 * 100.0, "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ramp_names_the_wall_of_each_app() {
    let db = TestDb::start().await;
    let admin = db.connect("postgres").await;
    for name in ["ramp_app", "ramp_pool", "ramp_hot"] {
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .unwrap();
    }
    app_wall(&db).await;
    pool_wall(&db).await;
    open_model(&db).await;
    database_wall(&db).await;
}

/// Bad ramp flags are usage errors (exit 2) before anything is measured.
#[test]
fn bad_ramp_flags_are_usage_errors() {
    let base = [
        "ramp",
        "--url",
        "http://127.0.0.1:1/x",
        "--db",
        "postgres://u@127.0.0.1:1/d",
    ];
    for (extra, says) in [
        (&["--steps", "1,0,4"][..], "--steps"),
        (&["--step-requests", "0"][..], "--step-requests"),
        (&["--max-errors", "lots"][..], "--max-errors"),
        (&["--sample-interval", "0s"][..], "--sample-interval"),
    ] {
        let out = pgcost().args(base).args(extra).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains(says), "{extra:?}: {stderr}");
    }
}
