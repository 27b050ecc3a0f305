//! The survey fixture of issue 41 (tests/support/survey_app.rs): the tracker of
//! tests/fixtures/django_drf as a whole web app (UI pages behind a session cookie, a REST
//! API by token, GraphQL, 404s on the ids of others, static files), its gunicorn access log
//! and the HAR of its GraphQL reads, written by real traffic. For now this checks the
//! fixture itself, so that it passes before the survey's features do:
//!
//! - the log has exactly the traffic's lines, each with its status;
//! - the HAR parses, and holds the GraphQL reads with their bodies, without a credential;
//! - each credential opens its own routes only (the token gets the UI's login redirect);
//! - each request's statements, counted by construction, are what pg_stat_statements
//!   measures beside it, and so do the routes' at their logged mix.
//!
//! The Python packages come from `.ci/run`'s install step; without them the test fails,
//! saying so.

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use serde_json::Value;
use support::survey_app::{AUTH_TOML, Credential, Kind, SurveyApp, expected_log, routes};
use support::{TestDb, pgcost, run_blocking};

/// Method, target and status of an access log line (combined format).
fn parse_line(line: &str) -> (String, String, u16) {
    let mut quoted = line.split('"');
    let request = quoted.nth(1).unwrap_or_else(|| panic!("{line}"));
    let mut words = request.split(' ');
    let (method, target) = (words.next().unwrap(), words.next().unwrap());
    let status = quoted.next().unwrap().split_whitespace().next().unwrap();
    (method.into(), target.into(), status.parse().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fixture_serves_its_traffic_and_knows_its_truth() {
    let db = TestDb::start().await;
    let dir = tempfile::tempdir().unwrap();
    let app = SurveyApp::start(&db, dir.path()).await;

    let log = std::fs::read_to_string(&app.access_log).unwrap();
    let mut lines: BTreeMap<(String, String, u16), u32> = BTreeMap::new();
    for line in log.lines() {
        *lines.entry(parse_line(line)).or_default() += 1;
    }
    assert_eq!(lines, expected_log(), "{log}");

    check_har(&app);
    check_credentials(&app).await;
    check_truth(&db, &app).await;
    println!(
        "Django, DRF and graphene-django {}: {} lines, {} routes",
        app.versions,
        log.lines().count(),
        routes().len()
    );
}

/// The HAR has the GraphQL reads the traffic sent, in order of their routes' turns, with
/// their bodies and statuses, and no credential.
fn check_har(app: &SurveyApp) {
    let har: Value = serde_json::from_str(&std::fs::read_to_string(&app.har).unwrap()).unwrap();
    let entries = har["log"]["entries"].as_array().unwrap();
    let reads: Vec<_> = (routes().into_iter())
        .filter(|r| r.kind == Kind::GraphqlRead)
        .collect();
    let logged: u32 = reads.iter().map(|r| r.logged()).sum();
    assert_eq!(entries.len(), logged as usize, "{har:#}");
    for entry in entries {
        let request = &entry["request"];
        assert_eq!(request["method"], "POST");
        assert_eq!(request["url"], format!("{}/graphql/", app.base_url));
        assert_eq!(entry["response"]["status"], 200);
        assert_eq!(request["postData"]["mimeType"], "application/json");
        let body: Value =
            serde_json::from_str(request["postData"]["text"].as_str().unwrap()).unwrap();
        let operation = body["operationName"].as_str().unwrap();
        assert!(
            body["query"]
                .as_str()
                .unwrap()
                .starts_with(&format!("query {operation}"))
        );
        assert!(
            reads.iter().any(|r| r.operation == Some(operation)),
            "{body}"
        );
        let text = request.to_string();
        assert!(!text.contains(app.token) && !text.contains(&app.session_id));
    }
}

/// The token opens the API and GraphQL, not the UI (a login redirect); the session opens
/// the UI, not GraphQL (401); nothing opens the API (403).
async fn check_credentials(app: &SurveyApp) {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let status = async |method: &str, path: &str, credential: Credential| -> u16 {
        let mut request = (client
            .request(method.parse().unwrap(), format!("{}{path}", app.base_url)))
        .header("Content-Type", "application/json");
        if method == "POST" {
            request = request.body(r#"{"query": "{ projects { id } }"}"#);
        }
        for (name, value) in app.headers(credential) {
            request = request.header(name, value);
        }
        request.send().await.unwrap().status().as_u16()
    };
    assert_eq!(status("GET", "/ui/issues/", Credential::Session).await, 200);
    assert_eq!(status("GET", "/ui/issues/", Credential::Token).await, 302);
    assert_eq!(
        status("GET", "/api/projects/", Credential::Token).await,
        200
    );
    // DRF answers with its first authentication class's header: the session's has none,
    // so an anonymous call is a 403, not tests/django_drf.rs's 401.
    let anonymous = status("GET", "/api/projects/", Credential::Anonymous).await;
    assert_eq!(anonymous, 403);
    assert_eq!(status("POST", "/graphql/", Credential::Token).await, 200);
    assert_eq!(status("POST", "/graphql/", Credential::Session).await, 401);
}

/// Each request of a replayable route runs the statements counted by construction,
/// measured beside it; each route's truth is a number, and its rows returned per request
/// (measured beside) too.
async fn check_truth(db: &TestDb, app: &SurveyApp) {
    for route in routes() {
        if matches!(route.kind, Kind::LoginPost | Kind::GraphqlWrite) {
            continue;
        }
        for request in &route.requests {
            let beside = app.measure(db, &route, request).await;
            let truth = request.statements.unwrap();
            let what = format!("{} {} {:?}", route.method, request.target, route.operation);
            assert_eq!(beside.statements, i64::from(truth), "{what}");
        }
        let per_request = route.statements_per_request();
        let (statements, rows) = app.measure_route(db, &route).await;
        assert_eq!(statements, per_request, "{}", route.template);
        println!(
            "{:<5}{:<32}{:<14}{:>4} logged {:>6.2} statements {:>8.2} rows per request",
            route.method,
            route.template,
            route.operation.unwrap_or(""),
            route.logged(),
            per_request,
            rows
        );
    }
}

/// The survey of the fixture's log and HAR, each route with its own credential
/// ([`AUTH_TOML`] in a pgcost.toml), `extra` added: its JSON document and how long it took.
fn survey(app: &SurveyApp, dir: &Path, log: &Path, extra: &[&str]) -> (Value, f64) {
    let config = dir.join("pgcost.toml");
    std::fs::write(&config, AUTH_TOML).unwrap();
    let mut cmd = pgcost();
    cmd.args(["survey", "--config"])
        .arg(&config)
        .arg("--access-log")
        .arg(log)
        .arg("--har")
        .arg(&app.har)
        .args(["--base-url", &app.base_url, "--db", &app.db_url])
        .args(["--format", "json", "-q"])
        .args(extra)
        .envs(app.auth_env());
    let started = Instant::now();
    let out = run_blocking(cmd).get_output().clone();
    let seconds = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "{:?}: {stderr}",
        out.status
    );
    let json: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    (json, seconds)
}

/// The routes of a survey, ranked first, by a share of the total (`db_time`, `blocks`).
fn ranked_by(json: &Value, share: &str) -> Vec<String> {
    let mut ranked: Vec<(f64, String)> = (json["routes"].as_array().unwrap().iter())
        .filter(|r| r["rank"].is_u64())
        .map(|r| {
            let name = format!(
                "{} {}",
                r["method"].as_str().unwrap(),
                r["route"].as_str().unwrap()
            );
            (r["share_of_total"][share].as_f64().unwrap_or(0.0), name)
        })
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
    ranked.into_iter().map(|(_, name)| name).collect()
}

/// Issue 41's acceptance: the app's own access log and the HAR of its GraphQL reads,
/// surveyed with each route's credential from `[[survey.auth]]`: every route ends where it
/// belongs. The replayable ones are valid and screened, their screened statements equal the
/// truth at the sample the burst sent, and those measured exactly (`--exact auto`) equal it
/// in an exact window too; writes, bodyless GraphQL POSTs and the route rejected in the log
/// are skipped, static files counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_apps_log_is_surveyed_route_by_route_with_its_own_credentials() {
    let db = TestDb::start().await;
    let dir = tempfile::tempdir().unwrap();
    let app = SurveyApp::start(&db, dir.path()).await;
    let burst = ["-n", "40", "-c", "4", "--warmup", "20"];
    let (json, seconds) = survey(&app, dir.path(), &app.access_log, &burst);
    println!("survey of {} routes took {seconds:.1} s", routes().len());
    let text = json.to_string();
    assert!(!text.contains(app.token) && !text.contains(&app.session_id));
    let found = |list: &str, method: &str, route: &str| {
        (json[list].as_array().unwrap().iter())
            .find(|r| r["method"] == method && r["route"] == route)
            .cloned()
    };
    let mut exact = 0;
    for route in routes() {
        let name = match route.operation {
            Some(operation) => format!("{} {operation}", route.template),
            None => route.template.to_string(),
        };
        let what = format!("{} {name}", route.method);
        let rejected = route.requests.iter().all(|r| matches!(r.status, 401 | 403));
        match route.kind {
            Kind::LoginPost => {
                let skipped = found("skipped", route.method, &name);
                assert!(skipped.is_some(), "{what} not skipped: {json:#}");
            }
            // The log has no GraphQL bodies: its POSTs, the mutation's among them, are
            // skipped with what to give; the HAR's reads are replayed.
            Kind::GraphqlWrite => {
                let skipped = found("skipped", "POST", route.template).unwrap();
                let reason = skipped["reason"].as_str().unwrap();
                assert!(reason.contains("--graphql-operations"), "{reason}");
            }
            Kind::Static => {
                assert!(found("routes", route.method, &name).is_none(), "{what}");
            }
            _ if rejected => {
                let skipped = found("skipped", route.method, &name).unwrap();
                let reason = skipped["reason"].as_str().unwrap();
                assert!(
                    reason.contains("rejected in the log too"),
                    "{what}: {reason}"
                );
            }
            _ => {
                let r = found("routes", route.method, &name)
                    .unwrap_or_else(|| panic!("{what} not replayed: {json:#}"));
                assert_eq!(r["valid"], true, "{what}: {r:#}");
                let sample: Vec<(String, u64)> = (r["sample"].as_array().unwrap().iter())
                    .map(|u| {
                        (
                            u["url"].as_str().unwrap().into(),
                            u["requests"].as_u64().unwrap(),
                        )
                    })
                    .collect();
                let sample: Vec<(&str, u64)> =
                    sample.iter().map(|(u, n)| (u.as_str(), *n)).collect();
                let truth = route.statements_for_sample(&sample);
                assert_eq!(r["screened"]["statements"], truth, "{what}: {r:#}");
                if r["measurement"] == "exact" {
                    exact += 1;
                    assert_eq!(r["per_request"]["statements"], truth, "{what}: {r:#}");
                }
            }
        }
    }
    assert!((1..=5).contains(&exact), "{exact} exact routes: {json:#}");
    assert!(json["static_requests"].as_u64().unwrap() >= 6, "{json:#}");
    assert_eq!(json["valid"], true, "{json:#}");
}

/// The app's log with 24 more routes, as a DBA's real log has them: its lists and pages
/// with a tracking or display parameter the app ignores (`?ref=`, `?utm_source=`, ...),
/// each a template of its own, each logged 3 times with a 200.
fn log_of_36_routes(app: &SurveyApp, dir: &Path) -> std::path::PathBuf {
    let mut log = std::fs::read_to_string(&app.access_log).unwrap();
    let pages = [
        "/api/projects/",
        "/api/my/issues/",
        "/api/issues/?status=open",
        "/ui/issues/",
    ];
    let params = ["ref", "utm_source", "lang", "v", "from", "tab"];
    for page in pages {
        for param in params {
            let sep = if page.contains('?') { '&' } else { '?' };
            let line = format!(
                "127.0.0.1 - - [06/Dec/2026:18:00:00 +0000] \"GET {page}{sep}{param}=1 HTTP/1.1\" \
                 200 512 \"-\" \"bench\"\n"
            );
            log.push_str(&line.repeat(3));
        }
    }
    let path = dir.join("access-36.log");
    std::fs::write(&path, log).unwrap();
    path
}

/// Issue 41's benchmark (`bash benches/survey_screen.sh`): the fixture's log with 24 more
/// routes (36 replayed in all, [`log_of_36_routes`]) and its HAR, surveyed with screening
/// (`--exact auto`) and with every route in an exact window (`--exact all`), one after the
/// other on the same app, at `-n 100 -c 4`; prints each one's time, its routes (ranked,
/// screened, exact, not valid) and the top five of each by db time and by blocks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a benchmark: bash benches/survey_screen.sh"]
async fn bench_screening_against_exact_windows() {
    let db = TestDb::start().await;
    let dir = tempfile::tempdir().unwrap();
    let app = SurveyApp::start(&db, dir.path()).await;
    let log = log_of_36_routes(&app, dir.path());
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average before the runs: {}", load.trim());
    let burst = ["-n", "100", "-c", "4"];
    let run = |exact: &str| {
        let extra = [&burst[..], &["--exact", exact]].concat();
        survey(&app, dir.path(), &log, &extra)
    };
    let (screened, screening_s) = run("auto");
    let (full, full_s) = run("all");
    for (name, json, seconds) in [
        ("screening", &screened, screening_s),
        ("--exact all", &full, full_s),
    ] {
        let routes = json["routes"].as_array().unwrap();
        let count = |key: &str, value: &str| routes.iter().filter(|r| r[key] == value).count();
        let invalid: Vec<String> = (routes.iter())
            .filter(|r| r["valid"] == false)
            .map(|r| format!("{} {}: {}", r["method"], r["route"], r["invalid_reasons"]))
            .collect();
        println!(
            "{name:>12}: {seconds:7.1} s, {} routes ({} ranked, {} exact, {} screened), {} skipped, {} not valid",
            routes.len(),
            routes.iter().filter(|r| r["rank"].is_u64()).count(),
            count("measurement", "exact"),
            count("measurement", "screened"),
            json["skipped"].as_array().unwrap().len(),
            invalid.len()
        );
        for line in invalid {
            println!("    not valid: {line}");
        }
    }
    println!("screening / --exact all: {:.2}", screening_s / full_s);
    for share in ["db_time", "blocks"] {
        let (a, b) = (ranked_by(&screened, share), ranked_by(&full, share));
        let top = |v: &[String]| v.iter().take(5).cloned().collect::<Vec<_>>();
        println!("top five by {share}: screening {:?}", top(&a));
        println!("top five by {share}: exact     {:?}", top(&b));
    }
}
