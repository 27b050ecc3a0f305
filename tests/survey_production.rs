//! `pgcost survey --production-stats` end to end: the test cluster's own
//! `pg_stat_statements`, after the fixture's routes served traffic and a "background job"
//! ran a statement of its own, is exported to CSV (and read through its URL); each of
//! the fixture's statements is attributed to the route that runs it, and the job's
//! statement is unexplained.

mod support;

use serde_json::Value;
use support::fixture::Fixture;
use support::{TestDb, closed_port, pgcost, run_blocking};

/// Production's traffic: what the access log below records.
const LOGGED: [(&str, usize); 5] = [
    ("/items/7", 3),
    ("/items/12", 2),
    ("/items/40", 1),
    ("/scan", 3),
    ("/forbidden", 1),
];

/// A statement no route runs: a job on the app's database, outside any request.
const JOB: &str = "SELECT count(*) FROM items WHERE owner = 3 AND name <> 'x'";

fn access_log() -> String {
    let mut log = String::new();
    for (path, times) in LOGGED {
        for _ in 0..times {
            log += &format!(
                "10.0.0.1 - - [02/Dec/2026:10:00:00 +0000] \"GET {path} HTTP/1.1\" 200 9 \"-\" \"t\"\n"
            );
        }
    }
    log
}

/// pg_stat_statements reset, then the logged requests served by the app and the job run
/// twice: what production's statistics hold.
async fn production_traffic(db: &TestDb, app: &Fixture) {
    let client = db.connect(support::DB).await;
    client
        .batch_execute("SELECT pg_stat_statements_reset()")
        .await
        .unwrap();
    let http = reqwest::Client::new();
    for (path, times) in LOGGED {
        for _ in 0..times {
            http.get(app.url(path)).send().await.unwrap();
        }
    }
    for _ in 0..2 {
        client.simple_query(JOB).await.unwrap();
    }
}

/// The export as `psql --csv` writes it, and one more row: the scan's statement as
/// another server spells it, with that server's queryid.
async fn export_csv(db: &TestDb, path: &std::path::Path) {
    let client = db.connect(support::DB).await;
    let rows = client
        .query(
            "SELECT queryid::text, query, calls, rows, total_exec_time, shared_blks_hit \
             FROM pg_stat_statements \
             WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())",
            &[],
        )
        .await
        .unwrap();
    let mut csv = csv::Writer::from_path(path).unwrap();
    csv.write_record([
        "queryid",
        "query",
        "calls",
        "rows",
        "total_exec_time",
        "shared_blks_hit",
    ])
    .unwrap();
    for row in rows {
        let (queryid, query): (String, String) = (row.get(0), row.get(1));
        let (calls, rows, time, hit): (i64, i64, f64, i64) =
            (row.get(2), row.get(3), row.get(4), row.get(5));
        csv.write_record([
            queryid,
            query,
            calls.to_string(),
            rows.to_string(),
            time.to_string(),
            hit.to_string(),
        ])
        .unwrap();
    }
    csv.write_record([
        "1",
        "select id, owner, name\n  from ITEMS;",
        "5",
        "250",
        "0.5",
        "5",
    ])
    .unwrap();
    csv.flush().unwrap();
}

fn survey(db: &TestDb, app: &Fixture, log: &std::path::Path, source: &str) -> Value {
    let mut cmd = pgcost();
    cmd.args(["survey", "--access-log"])
        .arg(log)
        .args(["--base-url", &app.url(""), "--db", &db.url()])
        .args(["--production-stats", source, "--format", "json", "-q"])
        .args(["-n", "20", "-c", "2", "--warmup", "10"]);
    let out = run_blocking(cmd).get_output().clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Not valid as a whole: /forbidden is a 403.
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The top statement of that text, or a panic that shows the top.
fn top<'a>(production: &'a Value, query: &str) -> &'a Value {
    let top = production["top"].as_array().unwrap();
    top.iter()
        .find(|s| s["query"] == query)
        .unwrap_or_else(|| panic!("{query} not in the top: {top:#?}"))
}

/// The route explaining `query`: the only one, with its expected calls (calls per
/// request × logged requests) and the whole share.
fn assert_explained(production: &Value, query: &str, by: &str, route: &str, expected: f64) {
    let statement = top(production, query);
    assert_eq!(statement["matched_by"], by, "{statement:#}");
    let routes = statement["routes"].as_array().unwrap();
    assert_eq!(routes.len(), 1, "{statement:#}");
    assert_eq!(
        (&routes[0]["method"], &routes[0]["route"]),
        (&"GET".into(), &route.into())
    );
    assert_eq!(routes[0]["calls_per_request"], 1.0);
    assert_eq!(routes[0]["expected_calls"], expected);
    assert_eq!(routes[0]["share"], 1.0);
}

/// The checks both forms share: each fixture statement's route, its production calls,
/// and the job unexplained.
fn assert_attribution(production: &Value) {
    assert_eq!(production["ranked_by"], "total_exec_time");
    let name = "SELECT name FROM items WHERE id = $1";
    let labels = "SELECT id, label FROM small";
    let scan = "SELECT id, owner, name FROM items";
    // /items/{id} is logged 6 times, /scan 3 times, each statement once per request.
    assert_explained(production, name, "queryid", "/items/{id}", 6.0);
    assert_explained(production, labels, "queryid", "/items/{id}", 6.0);
    assert_explained(production, scan, "queryid", "/scan", 3.0);
    assert_eq!(top(production, name)["calls"], 6);
    assert_eq!(top(production, labels)["calls"], 6);
    assert_eq!(top(production, scan)["calls"], 3);
    let job = "SELECT count(*) FROM items WHERE owner = $1 AND name <> $2";
    assert_eq!(top(production, job)["calls"], 2);
    assert_eq!(top(production, job)["matched_by"], Value::Null);
    let unexplained: Vec<&str> = (production["unexplained"].as_array().unwrap().iter())
        .map(|s| s["query"].as_str().unwrap())
        .collect();
    assert!(unexplained.contains(&job), "{unexplained:?}");
    for explained in [name, labels, scan] {
        assert!(!unexplained.contains(&explained), "{unexplained:?}");
    }
    assert_eq!(
        production["unexplained_statements"].as_u64().unwrap() as usize,
        unexplained.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn production_statements_are_attributed_to_the_routes_that_run_them() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 4).await;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("access.log");
    std::fs::write(&log, access_log()).unwrap();

    production_traffic(&db, &app).await;
    let csv = dir.path().join("prod.csv");
    export_csv(&db, &csv).await;
    let json = survey(&db, &app, &log, csv.to_str().unwrap());
    let production = &json["production"];
    assert_eq!(production["source"], csv.to_str().unwrap());
    assert_attribution(production);
    // Another server's queryid: matched by the folded text.
    let other = top(production, "select id, owner, name\n  from ITEMS;");
    assert_eq!(other["queryid"], "1");
    assert_eq!(other["matched_by"], "text");
    assert_eq!(other["routes"][0]["route"], "/scan");
    // The reset, three fixture statements, the job and that row; calls: 6 + 6 + 3 + 5
    // explained, the reset's 1 and the job's 2 not.
    assert_eq!(production["statements"], 6);
    assert_eq!(production["explained_share_of_calls"], 20.0 / 23.0);

    // The URL form: the same statistics, read from the server at the survey's start.
    production_traffic(&db, &app).await;
    let json = survey(&db, &app, &log, &db.url());
    let production = &json["production"];
    let source = production["source"].as_str().unwrap();
    assert!(source.starts_with("postgres://"), "{source}");
    assert_attribution(production);
    // Read before the survey's own statements: the reset, the fixture's three, the job.
    assert_eq!(production["statements"], 5);
    assert_eq!(production["explained_share_of_calls"], 15.0 / 18.0);
}

#[test]
fn an_export_without_calls_is_a_usage_error_before_any_wait() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("access.log");
    std::fs::write(&log, access_log()).unwrap();
    let csv = dir.path().join("prod.csv");
    std::fs::write(&csv, "queryid,query,rows\n1,SELECT 1,1\n").unwrap();
    // The app refuses connections: the export's error comes before the probes.
    let refused = format!("http://127.0.0.1:{}", closed_port());
    let out = pgcost()
        .args(["survey", "--access-log"])
        .arg(&log)
        .args([
            "--base-url",
            &refused,
            "--db",
            "postgres://nobody@127.0.0.1:1/none",
        ])
        .arg("--production-stats")
        .arg(&csv)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let expected = format!(
        "{}: row 1 (the header) has no column `calls`",
        csv.display()
    );
    assert!(stderr.contains(&expected), "{stderr}");
}
