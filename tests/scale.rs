//! `pgcost scale` and `scale = {...}` in pgcost.check, end to end: the fixture's list
//! endpoint measured at three page sizes (5, 10, 20). The loop's lookup runs once per row,
//! so its slope is exactly 1 call per unit of n with r² = 1; the page and its COUNT run
//! once per request whatever n is (slope 0); the batched variant runs the same three
//! statements at every size. A budget `statements_slope = 0` fails on the loop and holds
//! on the batched variant.

mod support;

use std::time::Instant;

use serde_json::Value;
use support::fixture::{Fixture, scale};
use support::{DB, TestDb, pgcost, run_blocking};

const VALUES: &str = "5,10,20";

async fn setup() -> (TestDb, Fixture) {
    let db = TestDb::start().await;
    let app = db.connect(DB).await;
    app.batch_execute(scale::SCHEMA).await.unwrap();
    app.batch_execute("VACUUM ANALYZE scale_items, scale_tags")
        .await
        .unwrap();
    let fixture = Fixture::start(&db.url(), 4).await;
    (db, fixture)
}

fn statement<'a>(report: &'a Value, query: &str) -> &'a Value {
    (report["statements"].as_array().unwrap().iter())
        .find(|s| s["query"] == query)
        .unwrap_or_else(|| panic!("no {query} in {:#}", report["statements"]))
}

fn rounded(value: &Value) -> f64 {
    (value.as_f64().unwrap() * 100.0).round() / 100.0
}

fn kinds(report: &Value) -> Vec<String> {
    (report["findings"].as_array().unwrap().iter())
        .map(|f| f["kind"].as_str().unwrap().to_string())
        .collect()
}

/// Slopes and findings of one scale document of the fixture's list endpoint.
fn assert_loop(report: &Value) {
    assert_eq!(report["valid"], true, "{:#}", report["invalid_reasons"]);
    let ns: Vec<u64> = (report["points"].as_array().unwrap().iter())
        .map(|p| p["n"].as_u64().unwrap())
        .collect();
    assert_eq!(ns, [5, 10, 20]);
    let lookup = statement(report, scale::LOOKUP);
    assert_eq!(rounded(&lookup["slope"]), 1.0, "{lookup:#}");
    assert_eq!(rounded(&lookup["intercept"]), 0.0, "{lookup:#}");
    assert_eq!(lookup["r2"], 1.0, "{lookup:#}");
    assert_eq!(
        lookup["calls_per_request"],
        serde_json::json!([5.0, 10.0, 20.0])
    );
    for flat in [scale::PAGE, scale::COUNT] {
        let s = statement(report, flat);
        assert_eq!(rounded(&s["slope"]), 0.0, "{s:#}");
        assert_eq!(s["calls_per_request"], serde_json::json!([1.0, 1.0, 1.0]));
    }
    let statements = &report["per_request"]["statements"];
    assert_eq!(rounded(&statements["slope"]), 1.0, "{statements:#}");
    assert_eq!(rounded(&statements["intercept"]), 2.0, "{statements:#}");
    assert_eq!(kinds(report), ["n_plus_one"]);
    let finding = &report["findings"][0];
    assert_eq!(finding["query"], scale::LOOKUP);
    assert_eq!(rounded(&finding["evidence"]["slope"]), 1.0, "{finding:#}");
    assert_eq!(finding["evidence"]["largest_n"], 20.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loop_grows_by_one_statement_per_row_and_the_page_and_count_stay_flat() {
    let (db, app) = setup().await;
    let started = Instant::now();
    let sarif = tempfile::NamedTempFile::new().unwrap();
    let mut cmd = pgcost();
    cmd.args(["scale", "--url", &app.url("/scale/loop?limit={n}")])
        .args(["--values", VALUES, "--db", &db.url(), "-n", "100", "-q"])
        .args(["--format", "json"])
        .arg(format!("--export=sarif={}", sarif.path().display()));
    let out = run_blocking(cmd).code(0);
    let report: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    eprintln!("pgcost scale: {:.1} s", started.elapsed().as_secs_f64());
    assert_loop(&report);
    // The same run in SARIF: valid against the schema, the loop's n_plus_one its result.
    let (valid, printed) = support::validate_sarif(&[sarif.path()]);
    assert!(valid, "{printed}");
    let log: Value = serde_json::from_str(&std::fs::read_to_string(sarif.path()).unwrap()).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{results:#?}");
    assert_eq!(results[0]["ruleId"], "n_plus_one");
    let message = results[0]["message"]["text"].as_str().unwrap();
    assert!(message.contains(scale::LOOKUP), "{message}");
    assert_eq!(
        report["url"],
        app.url("/scale/loop?limit={n}"),
        "the template, as given"
    );
}

/// pgcost.toml with one scaled endpoint, `name`, at `path`, and `statements_slope = 0`.
fn config(dir: &std::path::Path, base_url: &str, db_url: &str, name: &str, path: &str) {
    let text = format!(
        "base_url = \"{base_url}\"\n\n[database]\nurl = \"{db_url}\"\n\n\
         [[endpoint]]\nname = \"{name}\"\npath = \"{path}\"\nrequests = 100\n\
         scale = {{ param = \"n\", values = [20, 5, 10] }}\n\n\
         [endpoint.budget]\nstatements_slope = 0\n"
    );
    std::fs::write(dir.join("pgcost.toml"), text).unwrap();
}

async fn check(name: &str, path: &str, code: i32) -> Value {
    let (db, app) = setup().await;
    let dir = tempfile::tempdir().unwrap();
    config(dir.path(), &app.url(""), &db.url(), name, path);
    let started = Instant::now();
    let mut cmd = pgcost();
    cmd.args(["check", "--config"])
        .arg(dir.path().join("pgcost.toml"))
        .args(["--format", "json", "-q"]);
    let out = run_blocking(cmd);
    let stdout = out.get_output().stdout.clone();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    eprintln!(
        "pgcost check {name}: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(out.get_output().status.code(), Some(code), "{stderr}");
    support::assert_schema("check", &String::from_utf8_lossy(&stdout));
    let report: Value = serde_json::from_slice(&stdout).unwrap();
    report["endpoints"][0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_statements_slope_budget_of_zero_fails_on_the_loop() {
    let endpoint = check("loop", "/scale/loop?limit={n}", 1).await;
    assert_loop(&endpoint["scale"]);
    let breaches = endpoint["breaches"].as_array().unwrap();
    assert_eq!(breaches.len(), 1, "{breaches:#?}");
    assert_eq!(breaches[0]["metric"], "statements_slope");
    assert_eq!(rounded(&breaches[0]["actual"]), 1.0);
    assert_eq!(breaches[0]["budget"], 0.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_statements_slope_budget_of_zero_holds_on_the_batched_variant() {
    let endpoint = check("batched", "/scale/batched?limit={n}", 0).await;
    let report = &endpoint["scale"];
    assert_eq!(report["valid"], true, "{:#}", report["invalid_reasons"]);
    assert_eq!(endpoint["breaches"], serde_json::json!([]));
    for query in [scale::PAGE, scale::COUNT, scale::BATCH] {
        let s = statement(report, query);
        assert_eq!(rounded(&s["slope"]), 0.0, "{s:#}");
        assert_eq!(s["calls_per_request"], serde_json::json!([1.0, 1.0, 1.0]));
    }
    assert_eq!(rounded(&report["per_request"]["statements"]["slope"]), 0.0);
    assert!(
        !kinds(report).contains(&"n_plus_one".to_string()),
        "{:#}",
        report["findings"]
    );
}

#[test]
fn a_template_without_its_placeholder_or_with_one_value_is_a_usage_error() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--url", "http://127.0.0.1:9/x", "--values", VALUES],
            "has no {n}",
        ),
        (
            &[
                "--url",
                "http://127.0.0.1:9/{n}?limit={n}",
                "--values",
                VALUES,
            ],
            "2 times",
        ),
        (
            &["--url", "http://127.0.0.1:9/x?limit={n}", "--values", "5"],
            "at least two",
        ),
        (
            &["--url", "http://127.0.0.1:9/x?limit={n}", "--values", "5,x"],
            "non-negative",
        ),
        (
            &[
                "--url",
                "http://127.0.0.1:9/x?limit={n}",
                "--values",
                "5,5,9",
            ],
            "repeats",
        ),
    ];
    for (args, message) in cases {
        let out = pgcost().arg("scale").args(*args).assert().code(2);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(stderr.contains("hint:"), "{args:?}: {stderr}");
    }
}
