//! `pgcost survey` on GraphQL traffic, end to end: a HAR's POSTs to the fixture's
//! `/graphql/` are grouped by operation and replayed with their bodies (sent as JSON, which
//! the endpoint requires), each operation's statements per request equal to what its SQL
//! costs by construction; the mutation and the access log's bodyless POSTs are skipped, and
//! the app never receives a mutation. And `audit --body` sends a JSON body as JSON, which
//! the same endpoint requires.

mod support;

use std::sync::atomic::Ordering;

use serde_json::{Value, json};
use support::fixture::Fixture;
use support::fixture::graphql::MUTATIONS;
use support::{SMALL, TestDb, pgcost, run_blocking};

/// A HAR entry: a POST of `body` to the app's `/graphql/`.
fn entry(body: Value) -> Value {
    json!({"request": {
        "method": "POST",
        "url": "https://app.example/graphql/",
        "postData": {"mimeType": "application/json", "text": body.to_string()}
    }})
}

/// `ProjectList` 3 times over two variables (n = 5 twice, n = 9 once), an anonymous
/// `{ labels }` once and a mutation once.
fn har() -> String {
    let list = "query ProjectList($n: Int!) { projects(first: $n) { id name } }";
    let projects = |n: u64| {
        entry(json!({"query": list, "operationName": "ProjectList", "variables": {"n": n}}))
    };
    let labels = "# not a mutation\n{ labels { id label } }";
    let rename = "mutation Rename { rename(id: 1, name: \"x\") { id } }";
    let entries = [
        projects(5),
        projects(9),
        projects(5),
        entry(json!({"query": labels})),
        entry(json!({"query": rename, "operationName": "Rename"})),
    ];
    json!({"log": {"entries": entries}}).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_har_s_graphql_reads_are_replayed_by_operation_exactly() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 4).await;
    let dir = tempfile::tempdir().unwrap();
    let har_file = dir.path().join("session.har");
    std::fs::write(&har_file, har()).unwrap();
    // The access log's GraphQL POSTs, which carry no body.
    let log = dir.path().join("access.log");
    let line = "10.0.0.1 - - [02/Dec/2026:10:00:00 +0000] \"POST /graphql/ HTTP/1.1\" 200 80 \"-\" \"-\"\n";
    std::fs::write(&log, line.repeat(2)).unwrap();
    let mut cmd = pgcost();
    cmd.args(["survey", "--har"])
        .arg(&har_file)
        .arg("--access-log")
        .arg(&log)
        .args(["--base-url", &app.url(""), "--db", &db.url()])
        .args([
            "--format", "json", "-q", "-n", "30", "-c", "3", "--warmup", "30",
        ]);
    let out = run_blocking(cmd).get_output().clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    support::assert_schema("survey", &stdout);
    let json: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(MUTATIONS.load(Ordering::SeqCst), 0, "a mutation was sent");
    let routes = json["routes"].as_array().unwrap();
    let route = |name: &str| {
        (routes.iter().find(|r| r["route"] == name)).unwrap_or_else(|| panic!("{name}: {json}"))
    };
    assert_eq!(routes.len(), 2, "{json}");
    let (list, labels) = (route("/graphql/ ProjectList"), route("/graphql/ {labels}"));
    for r in [list, labels] {
        assert_eq!(
            (&r["method"], &r["valid"]),
            (&"POST".into(), &true.into()),
            "{r}"
        );
    }
    assert_eq!(list["log_requests"], 3);
    // One concrete request per body, sampled 2:1 over the 30 requests.
    let sample: Vec<(u64, Value)> = (list["sample"].as_array().unwrap().iter())
        .map(|u| {
            let body: Value = serde_json::from_str(u["body"].as_str().unwrap()).unwrap();
            (
                u["requests"].as_u64().unwrap(),
                body["variables"]["n"].clone(),
            )
        })
        .collect();
    assert_eq!(sample, [(20, 5.into()), (10, 9.into())]);
    // One statement per request, reading and returning its n rows: 20 × 5 + 10 × 9.
    let figure = |r: &Value, key: &str| r["per_request"][key].as_f64().unwrap();
    assert_eq!(figure(list, "statements"), 1.0);
    let rows = 190.0 / 30.0;
    assert!(
        (figure(list, "rows_returned") - rows).abs() < 1e-9,
        "{list}"
    );
    assert!((figure(list, "rows_read") - rows).abs() < 1e-9, "{list}");
    assert_eq!(labels["log_requests"], 1);
    assert_eq!(figure(labels, "statements"), 2.0);
    assert_eq!(figure(labels, "rows_read"), (2 * SMALL) as f64);
    assert_eq!(figure(labels, "rows_returned"), (SMALL + 1) as f64);
    let skipped: Vec<(&str, u64, &str)> = (json["skipped"].as_array().unwrap().iter())
        .map(|s| {
            let route = s["route"].as_str().unwrap();
            (
                route,
                s["requests"].as_u64().unwrap(),
                s["reason"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert_eq!(skipped[0].0, "/graphql/");
    assert_eq!(skipped[0].1, 2);
    assert!(skipped[0].2.contains("--har") && skipped[0].2.contains("--graphql-operations"));
    assert_eq!(
        skipped[1],
        (
            "/graphql/ Rename",
            1,
            "a GraphQL mutation changes the app's data"
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_access_log_with_apollo_s_operations_replays_each_read_once() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 4).await;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("access.log");
    let line = "10.0.0.1 - - [02/Dec/2026:10:00:00 +0000] \"POST /graphql/ HTTP/1.1\" 200 80 \"-\" \"-\"\n";
    std::fs::write(&log, line.repeat(3)).unwrap();
    let manifest = dir.path().join("persisted-queries.json");
    let operation = |id: &str, name: &str, kind: &str, body: &str| json!({"id": id, "name": name, "type": kind, "body": body});
    let operations = [
        operation(
            "a1",
            "ProjectList",
            "query",
            "query ProjectList($n: Int = 1) { projects(first: $n) { id } }",
        ),
        operation(
            "b2",
            "Rename",
            "mutation",
            "mutation Rename { rename { id } }",
        ),
    ];
    let apollo = json!({"format": "apollo-persisted-query-manifest", "version": 1,
        "operations": operations});
    std::fs::write(&manifest, apollo.to_string()).unwrap();
    let mut cmd = pgcost();
    cmd.args(["survey", "--access-log"])
        .arg(&log)
        .arg("--graphql-operations")
        .arg(&manifest)
        .args(["--base-url", &app.url(""), "--db", &db.url()])
        .args([
            "--format", "json", "-q", "-n", "20", "-c", "2", "--warmup", "20",
        ]);
    let out = run_blocking(cmd).get_output().clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(MUTATIONS.load(Ordering::SeqCst), 0, "a mutation was sent");
    let routes = json["routes"].as_array().unwrap();
    assert_eq!(routes.len(), 1, "{json}");
    let list = &routes[0];
    // Posted to the logged endpoint, 1 request, 1 statement that reads its 1 row.
    assert_eq!(list["route"], "/graphql/ ProjectList");
    assert_eq!(list["log_requests"], 1);
    assert_eq!(list["per_request"]["statements"], 1.0);
    assert_eq!(list["per_request"]["rows_read"], 1.0);
    let skipped = json["skipped"].as_array().unwrap();
    let reasons: Vec<(&str, u64)> = (skipped.iter())
        .map(|s| {
            (
                s["route"].as_str().unwrap(),
                s["requests"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(reasons, [("/graphql/", 3), ("/graphql/ Rename", 1)]);
    let reason = skipped[0]["reason"].as_str().unwrap();
    assert!(reason.contains("replayed instead"), "{reason}");
    let warnings = json["warnings"].to_string();
    assert!(warnings.contains("--graphql-operations operation counts 1 request"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_audit_s_json_body_is_sent_as_json() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 4).await;
    let body = json!({"query": "{ labels { id } }"}).to_string();
    let mut cmd = pgcost();
    cmd.args(["audit", "--url", &app.url("/graphql/"), "--db", &db.url()])
        .args(["-X", "POST", "--body", &body])
        .args(["--format", "json", "-q", "-n", "10", "-c", "2"]);
    let out = run_blocking(cmd).get_output().clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Without Content-Type: application/json the endpoint answers 415, and the report is
    // not valid.
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["per_request"]["statements"], 2.0, "{json}");
}
