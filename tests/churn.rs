//! A verdict you can gate a merge on. Windows without churn: the fixture's pool retires one
//! connection inside the first window, which is discarded and measured again, so that the
//! exact budget holds run after run (and fails with `retries = 0`). Credentials that
//! count: an API that serves an unknown key as anonymous makes the run not valid.

mod support;

use std::path::{Path, PathBuf};
use std::time::Instant;

use support::fixture::{Fixture, Recycle, secrets};
use support::{ITEMS, SMALL, TestDb, pgcost, run_blocking};

const WARMUP: u64 = 20;
/// The warm-up as sent: the floor, then one slice past it (20 requests, the fewest in a
/// slice, since six per connection of two is 12), compared with the floor's second half.
const WARMUP_SENT: u64 = WARMUP + 20;
const REQUESTS: u64 = 200;

/// One `/recycle` endpoint held to its exact cost: one statement in one transaction, a
/// sequential scan of every `items` row, all returned.
fn write_config(dir: &Path, base_url: &str, retries: Option<u32>) -> PathBuf {
    let retries = retries.map_or(String::new(), |n| format!("retries = {n}\n"));
    let text = format!(
        r#"base_url = "{base_url}"

[database]
url_env = "CHURN_DB_URL"

[defaults]
requests = {REQUESTS}
concurrency = 2
warmup = {WARMUP}
{retries}
[[endpoint]]
name = "recycle"
path = "/recycle"

[endpoint.budget]
transactions = 1
statements = 1
rows_read = {ITEMS}
rows_returned = {ITEMS}
"#
    );
    let path = dir.join("pgcost.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `pgcost check --format json`: its exit code and document.
fn check(db_url: &str, config: &Path) -> (i32, serde_json::Value) {
    let mut cmd = pgcost();
    cmd.args(["check", "--quiet", "--format", "json", "--config"])
        .arg(config)
        .env("CHURN_DB_URL", db_url);
    let assert = run_blocking(cmd);
    let output = assert.get_output();
    let code = output.status.code().unwrap();
    support::assert_schema("check", &String::from_utf8_lossy(&output.stdout));
    let json = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "exit {code}, no JSON ({e}): {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (code, json)
}

/// Retires a pooled connection at the middle request of the first burst.
fn recycle_in_the_first_window(recycle: &Recycle) {
    recycle.after(WARMUP_SENT + REQUESTS / 2);
}

fn assert_exact(report: &serde_json::Value) {
    let p = &report["per_request"];
    assert_eq!(p["transactions"], 1.0, "{p}");
    assert_eq!(p["statements"], 1.0, "{p}");
    assert_eq!(p["rows_read"], ITEMS as f64, "{p}");
    assert_eq!(p["rows_returned"], ITEMS as f64, "{p}");
    assert_eq!(p["new_sessions"], 0.0, "{p}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_retired_in_the_window_is_measured_again() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 2).await;
    let dir = tempfile::tempdir().unwrap();

    let config = write_config(dir.path(), &app.url(""), None);
    recycle_in_the_first_window(&app.recycle);
    let (code, json) = check(&db.url(), &config);
    let report = &json["endpoints"][0]["report"];
    assert_eq!(code, 0, "{json:#}");
    assert_eq!(report["windows"]["discarded"], 1, "{}", report["windows"]);
    assert_eq!(
        report["windows"]["reasons"][0],
        "1 app connection opened and 1 closed during the window"
    );
    assert_exact(report);
    let warnings = report["warnings"].to_string();
    assert!(
        warnings.contains("1 window(s) discarded and measured again"),
        "{warnings}"
    );
    let discarded = support::note(report, "windows_discarded");
    assert_eq!(discarded["discarded"], 1, "{discarded}");
    assert_eq!(discarded["reasons"], report["windows"]["reasons"]);
    // The retired connection was the 120th request's: the first of the two bursts.
    let served = app.recycle.served.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(
        served,
        2 * (WARMUP_SENT + REQUESTS),
        "two warm-ups and two bursts"
    );

    // Without retries, the churned window stands: the new connection's statement
    // preparation is a transaction pg_stat_statements does not count, over the budget.
    let config = write_config(dir.path(), &app.url(""), Some(0));
    recycle_in_the_first_window(&app.recycle);
    let (code, json) = check(&db.url(), &config);
    let endpoint = &json["endpoints"][0];
    assert_eq!(code, 1, "{json:#}");
    assert_eq!(endpoint["report"]["windows"]["discarded"], 0);
    let breached = endpoint["breaches"].as_array().unwrap();
    assert!(
        breached.iter().any(|b| b["metric"] == "transactions"),
        "{endpoint}"
    );
    let warnings = endpoint["report"]["warnings"].to_string();
    assert!(
        warnings.contains(
            "connection churn: 1 app connection opened and 1 closed during the window, and no \
             clean window within --retries 0"
        ),
        "{warnings}"
    );
    assert!(
        warnings.contains("transactions exceed statements: "),
        "{warnings}"
    );
    let report = &endpoint["report"];
    let churn = support::note(report, "connection_churn");
    assert_eq!(
        (&churn["opened"], &churn["closed"], &churn["retries"]),
        (&1.into(), &1.into(), &0.into()),
        "{churn}"
    );
    let uncounted = support::note(report, "uncounted_transactions");
    assert_eq!(
        uncounted["transactions"].as_i64().unwrap() - uncounted["statements"].as_i64().unwrap(),
        churn["uncounted_transactions"].as_i64().unwrap(),
        "{uncounted} {churn}"
    );
}

/// Lanes of [`the_exact_budget_holds_run_after_run`]: each has its own database on the
/// shared cluster and its own fixture app, and runs its share of the runs one after another.
const LANES: u32 = 5;

/// Executions of the fixture's `/recycle` statement a run causes: a warm-up and a burst for
/// each of its two windows (the churned one and the one measured again).
const CALLS_PER_RUN: u64 = 2 * (WARMUP_SENT + REQUESTS);

/// The exact budget, run after run, with a connection retired in every first window.
/// `PGCOST_CHURN_RUNS` sets the number of runs (default 20; each takes about 45 s, two
/// windows, mostly settle waits), spread over [`LANES`] lanes that run at the same time.
/// Lanes cannot see each other's work: every figure pgcost reads is filtered by its target
/// database (`pg_stat_database` by `datid`, `pg_stat_statements` by `dbid`, settling by the
/// backends of `pg_stat_activity` in that database), and a leak of another lane's burst
/// would break the exact per-request figures. At the end, each lane's database must show
/// exactly the statement executions its own app served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_exact_budget_holds_run_after_run() {
    let runs: u32 = std::env::var("PGCOST_CHURN_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20);
    assert!(runs > 0, "PGCOST_CHURN_RUNS must be at least 1");
    let lanes = LANES.min(runs);
    let db = TestDb::start().await;
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let mut apps = Vec::new();
    let mut handles = Vec::new();
    // Every lane's database before any lane measures: creating and seeding one pushes
    // catalog invalidations through the cluster's shared queue, and an idle backend that
    // falls far enough behind catches up in an empty transaction of its own database (a
    // transaction no request made, in another lane's window; docs/postgres.md).
    for lane in 0..lanes {
        db.create_seeded_database(&format!("churn_lane_{lane}"))
            .await;
    }
    for lane in 0..lanes {
        let name = format!("churn_lane_{lane}");
        let db_url = db.cluster.url(&name);
        let app = Fixture::start(&db_url, 2).await;
        let lane_dir = dir.path().join(&name);
        std::fs::create_dir(&lane_dir).unwrap();
        let config = write_config(&lane_dir, &app.url(""), None);
        let recycle = app.recycle.clone();
        let lane_runs = (lane..runs).step_by(lanes as usize).count() as u64;
        handles.push(tokio::task::spawn_blocking(move || {
            for run in 1..=lane_runs {
                recycle_in_the_first_window(&recycle);
                let (code, json) = check(&db_url, &config);
                let report = &json["endpoints"][0]["report"];
                assert_eq!(code, 0, "lane {lane} run {run}: {json:#}");
                assert_eq!(report["windows"]["discarded"], 1, "lane {lane} run {run}");
                assert_exact(report);
                let served = recycle.served.load(std::sync::atomic::Ordering::SeqCst);
                assert_eq!(served, CALLS_PER_RUN, "lane {lane} run {run}");
            }
            (name, lane_runs)
        }));
        apps.push(app);
    }
    let mut passed = 0;
    let mut per_lane = Vec::new();
    for handle in handles {
        let lane = handle
            .await
            .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
        passed += lane.1;
        per_lane.push(lane);
    }
    let seconds = started.elapsed().as_secs_f64();

    // Each database saw its own app's requests and no other lane's.
    let admin = db.connect("postgres").await;
    for (name, lane_runs) in &per_lane {
        let row = admin
            .query_one(
                "SELECT coalesce(sum(s.calls), 0)::bigint FROM pg_stat_statements s
                 JOIN pg_database d ON d.oid = s.dbid
                 WHERE d.datname = $1 AND s.query = 'SELECT id, owner, name FROM items'",
                &[name],
            )
            .await
            .unwrap();
        let calls: i64 = row.get(0);
        assert_eq!(calls as u64, lane_runs * CALLS_PER_RUN, "{name}");
    }
    println!(
        "{passed} of {runs} consecutive check runs passed the exact budget, each with a \
         connection retired in its first window, in {seconds:.0} s ({lanes} lanes of \
         consecutive runs, one database and app each)"
    );
}

fn audit_api_key(
    db: &TestDb,
    app: &Fixture,
    key: &str,
    extra: &[&str],
) -> assert_cmd::assert::Assert {
    let mut cmd = pgcost();
    cmd.args(["audit", "-n", "20", "-c", "2", "--warmup", "4", "--db"])
        .arg(db.url())
        .args(["--url", &app.url("/auth/anonymous-fallback")])
        .args(["-H", &format!("X-Api-Key: {key}")])
        .args(extra);
    run_blocking(cmd)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_the_app_ignores_make_the_run_not_valid() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 2).await;
    let message = "the app answered the same without your credentials; they are being \
                   ignored (an unknown key served as anonymous?)";

    // A wrong key gets the anonymous answer: 200 and an empty list, like no key at all.
    let assert = audit_api_key(&db, &app, "wrong-key-5a1c", &[]).code(3);
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(
        stdout.starts_with(&format!("NOT VALID: {message}")),
        "the table view's first line: {stdout}"
    );
    assert!(!stdout.contains("wrong-key-5a1c"), "{stdout}");

    // The right key lists `small`: the answers differ, the run is valid and exact.
    let assert = audit_api_key(&db, &app, secrets::API_KEY, &["--format", "json"]).code(0);
    let report: serde_json::Value = serde_json::from_slice(&assert.get_output().stdout).unwrap();
    assert_eq!(report["per_request"]["statements"], 1.0);
    assert_eq!(report["per_request"]["rows_returned"], SMALL as f64);

    // A public endpoint, accepted on purpose: valid, with a warning.
    let extra = ["--allow-anonymous-equal", "--format", "json"];
    let assert = audit_api_key(&db, &app, "wrong-key-5a1c", &extra).code(0);
    let report: serde_json::Value = serde_json::from_slice(&assert.get_output().stdout).unwrap();
    assert_eq!(report["per_request"]["statements"], 0.0);
    assert!(
        report["warnings"]
            .to_string()
            .contains("accepted by --allow-anonymous-equal"),
        "{}",
        report["warnings"]
    );
    let accepted = support::note(&report, "anonymous_answer_accepted");
    assert_eq!(accepted["status"], 200, "{accepted}");

    // Every endpoint of check gets the same rule, and pgcost.toml can accept it.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pgcost.toml");
    let toml = |allow: &str| {
        format!(
            "base_url = \"{}\"\n[database]\nurl_env = \"CHURN_DB_URL\"\n[defaults]\n\
             requests = 20\nconcurrency = 2\nwarmup = 4\n{allow}\n[[endpoint]]\n\
             name = \"fallback\"\npath = \"/auth/anonymous-fallback\"\n\
             headers = {{ \"X-Api-Key\" = \"wrong-key-5a1c\" }}\n",
            app.url("")
        )
    };
    std::fs::write(&path, toml("")).unwrap();
    let mut cmd = pgcost();
    cmd.args(["check", "--quiet", "--config"])
        .arg(&path)
        .env("CHURN_DB_URL", db.url());
    let assert = run_blocking(cmd).code(3);
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(stdout.contains(&format!("fallback: {message}")), "{stdout}");

    std::fs::write(&path, toml("allow_anonymous_equal = true")).unwrap();
    let mut cmd = pgcost();
    cmd.args(["check", "--quiet", "--config"])
        .arg(&path)
        .env("CHURN_DB_URL", db.url());
    run_blocking(cmd).code(0);
}
