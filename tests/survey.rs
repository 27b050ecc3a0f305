//! `pgcost survey` end to end: an access log of mixed traffic written here is grouped into
//! routes, each accepted route replayed against the fixture app in shared settle windows,
//! and every route's statements per request equal what the fixture's SQL costs by
//! construction; a POST is skipped, a route logged 403 is rejected in the log too, and the
//! shares add to 1. Logged 404s are replayed as real traffic, a route logged 200 and
//! refused on replay is not valid, and `[[survey.auth]]` gives routes their own credential.

mod support;

use std::time::Instant;

use support::fixture::{Fixture, secrets};
use support::{ITEMS, SMALL, TestDb, closed_port, pgcost, run_blocking};

/// One combined-format line.
fn line(method: &str, path: &str, status: u16) -> String {
    format!(
        "10.0.0.1 - - [02/Dec/2026:10:00:00 +0000] \"{method} {path} HTTP/1.1\" {status} 12 \"-\" \"test\"\n"
    )
}

/// The mixed traffic: `/items/{id}` 6 times over three ids, `/scan` 3 times, a POST, a
/// static file, `/forbidden` (403) twice, and one line that does not parse.
fn mixed_log() -> String {
    let mut log = String::new();
    for (path, times) in [("/items/7", 3), ("/items/12", 2), ("/items/40", 1)] {
        for _ in 0..times {
            log += &line("GET", path, 200);
        }
    }
    for _ in 0..3 {
        log += &line("GET", "/scan", 200);
    }
    log += &line("POST", "/write", 200);
    log += &line("GET", "/assets/app.css", 200);
    log += &line("GET", "/forbidden", 403);
    log += "this is not a log line\n";
    log += &line("GET", "/forbidden", 403);
    log
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mixed_log_is_grouped_replayed_and_ranked_exactly() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 4).await;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("access.log");
    std::fs::write(&log, mixed_log()).unwrap();
    let base = app.url("");
    let mut cmd = pgcost();
    cmd.args(["survey", "--access-log"])
        .arg(&log)
        .args([
            "--base-url",
            &base,
            "--db",
            &db.url(),
            "--format",
            "json",
            "-q",
        ])
        .args(["-n", "40", "-c", "4", "--warmup", "40", "--exact", "all"])
        .arg(format!(
            "--export=sarif={}",
            dir.path().join("survey.sarif").display()
        ));
    let started = Instant::now();
    let out = run_blocking(cmd).get_output().clone();
    eprintln!("survey took {:.1}s", started.elapsed().as_secs_f64());
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Valid: the route logged 403 is the log's own answer, not replayed.
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    support::assert_schema("survey", &String::from_utf8_lossy(&out.stdout));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // The same run in SARIF: valid against the schema, a result per route's finding.
    let sarif = dir.path().join("survey.sarif");
    let (valid, printed) = support::validate_sarif(&[&sarif]);
    assert!(valid, "{printed}");
    let log: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    let findings: usize = (json["routes"].as_array().unwrap().iter())
        .map(|r| r["findings"].as_array().unwrap().len())
        .sum();
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), findings, "{results:#?}");
    assert!(
        !log["runs"][0]["tool"]["driver"]["rules"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert_eq!(json["parsed_requests"], 13);
    assert_eq!(json["unparsed_lines"], 1);
    assert_eq!(json["first_unparsed"][0]["line"], 13);
    assert_eq!(json["static_requests"], 1);
    let statics = &json["static_files"];
    assert_eq!(
        (&statics[0]["route"], &statics[0]["requests"]),
        (&"/assets/*.css".into(), &1.into()),
        "{statics}"
    );
    let skipped = json["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert_eq!(
        (
            &skipped[0]["method"],
            &skipped[0]["route"],
            &skipped[0]["requests"]
        ),
        (&"POST".into(), &"/write".into(), &1.into())
    );
    assert_eq!(
        (&skipped[1]["route"], &skipped[1]["requests"]),
        (&"/forbidden".into(), &2.into())
    );
    let reason = skipped[1]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("rejected in the log too (403 x2)"),
        "{reason}"
    );
    let routes = json["routes"].as_array().unwrap();
    let names: Vec<&str> = routes
        .iter()
        .map(|r| r["route"].as_str().unwrap())
        .collect();
    // By share of db time (then rows read). Db time is timed, so on a loaded machine
    // either route may lead: the order is checked against the shares the document
    // reports, which are checked below.
    assert_eq!(names.len(), 2, "{names:?}");
    let route = |name: &str| routes.iter().find(|r| r["route"] == name).unwrap();
    let (items, scan) = (route("/items/{id}"), route("/scan"));
    let db_time = |r: &serde_json::Value| r["share_of_total"]["db_time"].as_f64().unwrap();
    let (first, second) = (&routes[0], &routes[1]);
    assert!(db_time(first) >= db_time(second), "{first}\n{second}");
    assert_eq!((&first["rank"], &second["rank"]), (&1.into(), &2.into()));
    assert_eq!(items["valid"], true, "{items}");
    assert_eq!(items["log_requests"], 6);
    assert_eq!(items["urls"][1]["url"], "/items/12");
    let sample: Vec<u64> = (items["sample"].as_array().unwrap().iter())
        .map(|u| u["requests"].as_u64().unwrap())
        .collect();
    assert_eq!(sample, [20, 13, 7], "40 requests shared 3:2:1");
    assert_eq!(items["per_request"]["statements"], 2.0);
    assert_eq!(items["per_request"]["rows_read"], (ITEMS + SMALL) as f64);
    assert_eq!(items["per_request"]["rows_returned"], (1 + SMALL) as f64);
    assert_eq!(scan["valid"], true, "{scan}");
    assert_eq!(scan["per_request"]["statements"], 1.0);
    assert_eq!(scan["per_request"]["rows_read"], ITEMS as f64);
    assert_eq!(items["urls"][0]["logged_status"], 200);
    assert_eq!(items["credential"], serde_json::Value::Null);
    // Statements: 6 × 2 = 12 against 3 × 1 = 3; rows read 6 × 60 against 3 × 50.
    let share = |r: &serde_json::Value, k: &str| r["share_of_total"][k].as_f64().unwrap();
    assert_eq!(share(items, "statements"), 12.0 / 15.0);
    assert_eq!(share(items, "rows_read"), 360.0 / 510.0);
    for key in [
        "statements",
        "rows_read",
        "rows_returned",
        "db_time",
        "blocks",
    ] {
        let sum = share(items, key) + share(scan, key);
        assert!((sum - 1.0).abs() < 1e-9, "{key}: {sum}");
    }
    let traffic = items["traffic_share"].as_f64().unwrap();
    assert!((traffic - 6.0 / 13.0).abs() < 1e-12, "{traffic}");
}

#[test]
fn bad_inputs_are_usage_errors_before_any_wait() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.log");
    std::fs::write(&empty, "").unwrap();
    let writes = dir.path().join("writes.log");
    std::fs::write(
        &writes,
        line("POST", "/a/1", 201) + &line("GET", "/x.js", 200),
    )
    .unwrap();
    let ok = dir.path().join("ok.log");
    std::fs::write(&ok, line("GET", "/scan", 200)).unwrap();
    let refused = format!("http://127.0.0.1:{}", closed_port());
    let cases = [
        (&empty, "no request found"),
        (&writes, "no route to replay"),
        (&ok, "refused connections"),
    ];
    for (log, message) in cases {
        let out = pgcost()
            .args(["survey", "--access-log"])
            .arg(log)
            .args([
                "--base-url",
                &refused,
                "--db",
                "postgres://nobody@127.0.0.1:1/none",
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(message), "{message}: {stderr}");
    }
}

/// Screening: every route's burst read from pg_stat_statements with no settle wait, and
/// `--exact 1` measuring the top one by screened db time in an exact window. The screened
/// statements and rows returned of both routes equal the fixture's truth, and the exact
/// route's figures equal it too, rows read included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_is_screened_and_the_top_one_measured_exactly() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 4).await;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("access.log");
    std::fs::write(&log, mixed_log()).unwrap();
    let mut cmd = pgcost();
    cmd.args(["survey", "--access-log"])
        .arg(&log)
        .args(["--base-url", &app.url(""), "--db", &db.url()])
        .args(["--format", "json", "-q", "-n", "40", "-c", "4"])
        .args(["--warmup", "40", "--exact", "1"]);
    let started = Instant::now();
    let out = run_blocking(cmd).get_output().clone();
    eprintln!(
        "screening survey took {:.1}s",
        started.elapsed().as_secs_f64()
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    support::assert_schema("survey", &String::from_utf8_lossy(&out.stdout));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let routes = json["routes"].as_array().unwrap();
    let route = |name: &str| routes.iter().find(|r| r["route"] == name).unwrap();
    // (statements, rows returned, rows read) per request, by construction.
    let truth = [
        (
            "/items/{id}",
            2.0,
            (1 + SMALL) as f64,
            (ITEMS + SMALL) as f64,
        ),
        ("/scan", 1.0, ITEMS as f64, ITEMS as f64),
    ];
    let mut exact = 0;
    for (name, statements, rows_returned, rows_read) in truth {
        let r = route(name);
        assert_eq!(r["valid"], true, "{r}");
        assert_eq!(r["screened"]["statements"], statements, "{r}");
        assert_eq!(r["screened"]["rows_returned"], rows_returned, "{r}");
        assert!(r["screened"]["db_time_ms"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["screened"]["blocks"].as_f64().unwrap() > 0.0, "{r}");
        match r["measurement"].as_str().unwrap() {
            "exact" => {
                exact += 1;
                assert_eq!(r["per_request"]["statements"], statements, "{r}");
                assert_eq!(r["per_request"]["rows_returned"], rows_returned, "{r}");
                assert_eq!(r["per_request"]["rows_read"], rows_read, "{r}");
            }
            "screened" => assert_eq!(r["per_request"], serde_json::Value::Null, "{r}"),
            other => panic!("{other} in {r}"),
        }
        // A screened route has no rows read, so no route has a share of them.
        assert_eq!(r["share_of_total"]["rows_read"], serde_json::Value::Null);
    }
    assert_eq!(exact, 1, "--exact 1: {routes:#?}");
    // The exact route is the one with the larger screened db time (each logged 6 and 3
    // times): it ranks first among the two.
    let work = |r: &serde_json::Value| {
        r["screened"]["db_time_ms"].as_f64().unwrap() * r["log_requests"].as_f64().unwrap()
    };
    let (a, b) = (route("/items/{id}"), route("/scan"));
    let top = if work(a) >= work(b) { a } else { b };
    assert_eq!(top["measurement"], "exact", "{top}");
    // Logged 403 only: rejected in the log too, not replayed.
    assert!(
        routes.iter().all(|r| r["route"] != "/forbidden"),
        "{routes:#?}"
    );
    let skipped = json["skipped"].as_array().unwrap();
    assert!(
        skipped.iter().any(|s| s["route"] == "/forbidden"),
        "{skipped:#?}"
    );
}

/// The survey of `log` against the fixture with pgcost.toml `config` and `vars` set: its
/// exit code, its JSON and its stderr.
fn survey_with(
    app: &Fixture,
    db: &TestDb,
    log: &str,
    config: &str,
    vars: &[(&str, &str)],
) -> (Option<i32>, serde_json::Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let (log_path, toml) = (
        dir.path().join("access.log"),
        dir.path().join("pgcost.toml"),
    );
    std::fs::write(&log_path, log).unwrap();
    std::fs::write(&toml, config).unwrap();
    let mut cmd = pgcost();
    cmd.args(["survey", "--access-log"])
        .arg(&log_path)
        .arg("--config")
        .arg(&toml)
        .args(["--base-url", &app.url(""), "--db", &db.url()])
        .args([
            "--format", "json", "-q", "-n", "40", "-c", "4", "--warmup", "20",
        ]);
    for (name, value) in vars {
        cmd.env(name, value);
    }
    let out = run_blocking(cmd).get_output().clone();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    for secret in [secrets::API_KEY, secrets::COOKIE_VALUE] {
        assert!(
            !stdout.contains(secret) && !stderr.contains(secret),
            "{secret}"
        );
    }
    let json = serde_json::from_str(&stdout).unwrap_or(serde_json::Value::Null);
    (out.status.code(), json, stderr)
}

/// Two `[[survey.auth]]` entries, one a header, one a cookie, the default none.
const PER_ROUTE_AUTH: &str = r#"[survey]

[[survey.auth]]
paths = ["/auth/api-key"]
headers = { X-Api-Key = "${FIXTURE_API_KEY}" }

[[survey.auth]]
paths = ["/auth/cookie", "/auth/session"]
cookies = ["session=${FIXTURE_SESSION}"]
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logged_statuses_and_a_credential_per_route() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 4).await;
    let mut log = String::new();
    // /owned/{id}: 3 found, 1 logged 404 (an id that does not exist): replayed 30 and 10.
    for _ in 0..3 {
        log += &line("GET", "/owned/7", 200);
    }
    log += &line("GET", "/owned/900", 404);
    for path in ["/auth/api-key", "/auth/cookie", "/forbidden"] {
        let status = if path == "/forbidden" { 403 } else { 200 };
        log += &line("GET", path, status);
        log += &line("GET", path, status);
    }
    let vars = [
        ("FIXTURE_API_KEY", secrets::API_KEY),
        ("FIXTURE_SESSION", secrets::COOKIE_VALUE),
    ];
    let (code, json, stderr) = survey_with(&app, &db, &log, PER_ROUTE_AUTH, &vars);
    assert_eq!(code, Some(0), "{stderr}");
    support::assert_schema("survey", &json.to_string());
    let routes = json["routes"].as_array().unwrap();
    let route = |name: &str| routes.iter().find(|r| r["route"] == name).unwrap();
    let owned = route("/owned/{id}");
    assert_eq!(owned["valid"], true, "{owned}");
    assert_eq!(owned["per_request"]["statements"], 1.0);
    assert_eq!(owned["per_request"]["rows_read"], ITEMS as f64);
    assert_eq!(owned["per_request"]["rows_returned"], 30.0 / 40.0);
    let sample: Vec<(&str, u64, u64)> = (owned["sample"].as_array().unwrap().iter())
        .map(|u| {
            let status = u["logged_status"].as_u64().unwrap();
            (
                u["url"].as_str().unwrap(),
                u["requests"].as_u64().unwrap(),
                status,
            )
        })
        .collect();
    assert_eq!(sample, [("/owned/7", 30, 200), ("/owned/900", 10, 404)]);
    assert_eq!(owned["credential"], serde_json::Value::Null);
    for (name, index, first) in [
        ("/auth/api-key", 0, "/auth/api-key"),
        ("/auth/cookie", 1, "/auth/cookie"),
    ] {
        let r = route(name);
        assert_eq!(r["valid"], true, "{r}");
        assert_eq!(r["per_request"]["statements"], 1.0, "{r}");
        assert_eq!(r["per_request"]["rows_read"], SMALL as f64, "{r}");
        assert_eq!(r["credential"]["index"], index, "{r}");
        assert_eq!(r["credential"]["paths"][0], first, "{r}");
    }
    assert_eq!(routes.len(), 3, "{routes:?}");
    let skipped = json["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0]["route"], "/forbidden");
    assert!(
        (skipped[0]["reason"].as_str().unwrap()).starts_with("rejected in the log too (403 x2)")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_route_logged_200_and_refused_on_replay_is_not_valid() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 4).await;
    // The cookie of entry #1 does not open /auth/hs256, which wants a bearer token; the
    // page no entry matches gets the command line's credentials (none): its login page.
    let mut log = String::new();
    for path in ["/auth/hs256", "/ui/devices"] {
        log += &(line("GET", path, 200) + &line("GET", path, 200));
    }
    let config = PER_ROUTE_AUTH.replace("\"/auth/session\"", "\"/auth/hs256\"");
    let vars = [
        ("FIXTURE_API_KEY", secrets::API_KEY),
        ("FIXTURE_SESSION", secrets::COOKIE_VALUE),
    ];
    let (code, json, stderr) = survey_with(&app, &db, &log, &config, &vars);
    assert_eq!(code, Some(3), "{stderr}");
    let routes = json["routes"].as_array().unwrap();
    let route = |name: &str| routes.iter().find(|r| r["route"] == name).unwrap();
    let page = route("/ui/devices");
    assert_eq!(
        (&page["valid"], &page["rank"]),
        (&false.into(), &serde_json::Value::Null)
    );
    let reason = support::invalid(page, "rejected");
    assert!(
        reason.starts_with(
            "replayed 302 x40 of 40 where the log had 200 x2, with the command line's \
             credentials: a login redirect?"
        ),
        "{reason}"
    );
    let route = route("/auth/hs256");
    assert_eq!(route["valid"], false);
    assert_eq!(route["per_request"], serde_json::Value::Null);
    let reason = support::invalid(route, "rejected");
    assert!(
        reason.contains(
            "401 x2 where the log had 200 x2, with [[survey.auth]] #1 (/auth/cookie, /auth/hs256)"
        ),
        "{reason}"
    );
    // A variable that is not set is named, before anything is replayed.
    let (code, _, stderr) = survey_with(&app, &db, &log, &config, &vars[..1]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("[[survey.auth]] #1 cookie names the variable FIXTURE_SESSION"),
        "{stderr}"
    );
}
