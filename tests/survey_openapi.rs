//! `pgcost survey` from an OpenAPI document, end to end against the fixture app: each
//! operation with its example values is replayed once per route, and every route's
//! statements per request equal what the fixture's SQL costs by construction; a POST and
//! an operation without an example for a required parameter are skipped. The same survey
//! with pgcost.toml's `[survey]` section: a budget the fixture keeps is exit 0, and, driven
//! from the section alone, one it exceeds is exit 1 with the route named, and `top` leaves
//! the other route unmeasured.

mod support;

use std::path::Path;
use std::time::Instant;

use support::fixture::Fixture;
use support::{ITEMS, SMALL, TestDb, pgcost, run_blocking};

/// The fixture's routes as an OpenAPI document: the server's host is not the app's (the
/// replay goes to --base-url), `/items/{id}` has an example id, `/search` a required
/// parameter without an example.
const API: &str = r#"{
  "openapi": "3.0.3",
  "info": {"title": "fixture", "version": "1"},
  "servers": [{"url": "https://api.example.invalid"}],
  "paths": {
    "/items/{id}": {
      "get": {"parameters": [{"name": "id", "in": "path", "required": true,
                              "schema": {"type": "integer", "example": 12}}],
              "responses": {"200": {"description": "ok"}}}
    },
    "/scan": {"get": {"responses": {"200": {"description": "ok"}}}},
    "/write": {"post": {"responses": {"200": {"description": "ok"}}}},
    "/search": {
      "get": {"parameters": [{"name": "q", "in": "query", "required": true,
                              "schema": {"type": "string"}}],
              "responses": {"200": {"description": "ok"}}}
    }
  }
}"#;

/// The same document in YAML, as pgcost.toml names it.
const API_YAML: &str = "openapi: 3.1.0
info: {title: fixture, version: '1'}
paths:
  /items/{id}:
    get:
      parameters:
        - {name: id, in: path, required: true, example: 12}
      responses:
        200: {description: ok}
  /scan:
    get:
      responses:
        200: {description: ok}
  /write:
    post:
      responses:
        200: {description: ok}
";

fn json_of(bytes: &[u8]) -> serde_json::Value {
    serde_json::from_slice(bytes).unwrap()
}

fn route<'a>(json: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    (json["routes"].as_array().unwrap().iter())
        .find(|r| r["route"] == name)
        .unwrap_or_else(|| panic!("no {name} in {json}"))
}

/// The fixture's truth for `/items/{id}`: two statements, every row of `items` and of
/// `small` read.
fn assert_items(items: &serde_json::Value) {
    assert_eq!(items["valid"], true, "{items}");
    assert_eq!(items["log_requests"], 1);
    // The one URL the document's example gives is what every request of the burst sent.
    assert_eq!(items["sample"][0]["url"], "/items/12");
    assert_eq!(items["sample"].as_array().unwrap().len(), 1);
    assert_eq!(items["per_request"]["statements"], 2.0);
    assert_eq!(items["per_request"]["rows_read"], (ITEMS + SMALL) as f64);
    assert_eq!(items["per_request"]["rows_returned"], (1 + SMALL) as f64);
}

fn pgcost_toml(dir: &Path, base: &str, top: &str, budget: &str) {
    let text = format!(
        "[survey]\nopenapi = [\"api.yaml\"]\nbase_url = \"{base}\"\nrequests = 40\n\
         concurrency = 4\n{top}\n[survey.budget]\n{budget}\n"
    );
    std::fs::write(dir.join("pgcost.toml"), text).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openapi_document_is_replayed_exactly_and_held_to_the_toml_budget() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 4).await;
    let dir = tempfile::tempdir().unwrap();
    let api = dir.path().join("api.json");
    std::fs::write(&api, API).unwrap();
    std::fs::write(dir.path().join("api.yaml"), API_YAML).unwrap();
    let base = app.url("");
    // ./pgcost.toml, found in the working directory: its budget (which both routes keep)
    // applies, and the flags replace its inputs and base URL.
    let budget = format!("rows_read = {}\nstatements = 2", ITEMS + SMALL);
    pgcost_toml(dir.path(), "http://127.0.0.1:9", "", &budget);
    let mut cmd = pgcost();
    cmd.current_dir(dir.path())
        .args(["survey", "--openapi"])
        .arg(&api)
        .args(["--base-url", &base, "--db", &db.url(), "--format", "json"])
        .args(["-q", "-n", "40", "-c", "4", "--warmup", "40"]);
    let started = Instant::now();
    let out = run_blocking(cmd).get_output().clone();
    eprintln!("survey took {:.1}s", started.elapsed().as_secs_f64());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let json = json_of(&out.stdout);
    // Three operations with their examples (the POST among them); `/search` has none.
    assert_eq!(json["parsed_requests"], 3);
    assert_eq!(json["routes"].as_array().unwrap().len(), 2, "{json}");
    assert_items(route(&json, "/items/{id}"));
    let scan = route(&json, "/scan");
    assert_eq!(scan["per_request"]["statements"], 1.0);
    assert_eq!(scan["per_request"]["rows_read"], ITEMS as f64);
    // Statements: 1 × 2 against 1 × 1, each operation counted once.
    let items_share = route(&json, "/items/{id}")["share_of_total"]["statements"].clone();
    assert_eq!(items_share, 2.0 / 3.0);
    let skipped: Vec<(&str, &str, &str)> = (json["skipped"].as_array().unwrap().iter())
        .map(|s| {
            let text = |k: &str| s[k].as_str().unwrap();
            (text("method"), text("route"), text("reason"))
        })
        .collect();
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert_eq!((skipped[0].0, skipped[0].1), ("POST", "/write"));
    assert_eq!(
        skipped[1],
        (
            "GET",
            "/search",
            "no example value for required parameter q"
        )
    );
    assert!(
        json["warnings"][0]
            .as_str()
            .unwrap()
            .contains("counts 1 request"),
        "{json}"
    );
    assert_eq!(json["budget_failures"], serde_json::json!([]));

    // From pgcost.toml (named by --config), `top = 1` measures one route (the ties of
    // one request each go by template): `/items/{id}` reads 60 rows a request, over a
    // budget of 59, and returns 1 + SMALL rows, over a budget of SMALL: any figure of a
    // budget is a key of [survey.budget].
    let limit = ITEMS + SMALL - 1;
    pgcost_toml(
        dir.path(),
        &base,
        "top = 1",
        &format!("rows_read = {limit}\nrows_returned = {SMALL}"),
    );
    let report = dir.path().join("over.json");
    let mut cmd = pgcost();
    cmd.args(["survey", "--config"])
        .arg(dir.path().join("pgcost.toml"))
        .args(["--db", &db.url(), "--warmup", "40"])
        .arg(format!("--export=json={}", report.display()));
    let out = run_blocking(cmd).get_output().clone();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(&format!(
            "OVER BUDGET GET /items/{{id}}: rows_read 60.0 per request > {limit}"
        )),
        "{stdout}"
    );
    let json = json_of(&std::fs::read(&report).unwrap());
    assert_items(route(&json, "/items/{id}"));
    assert_eq!(json["routes"].as_array().unwrap().len(), 1, "{json}");
    assert_eq!(
        json["budget_failures"],
        serde_json::json!([{"method": "GET", "route": "/items/{id}", "figure": "rows_read",
                            "value": (ITEMS + SMALL) as f64, "limit": limit as f64},
                           {"method": "GET", "route": "/items/{id}", "figure": "rows_returned",
                            "value": (1 + SMALL) as f64, "limit": SMALL as f64}])
    );
    let beyond = &json["skipped"].as_array().unwrap()[1];
    assert_eq!(
        (&beyond["route"], &beyond["requests"]),
        (&"/scan".into(), &1.into())
    );
    assert!(
        beyond["reason"].as_str().unwrap().contains("top 1"),
        "{beyond}"
    );
    eprintln!("both surveys took {:.1}s", started.elapsed().as_secs_f64());
}

#[test]
fn bad_documents_and_sections_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let swagger = dir.path().join("swagger.json");
    std::fs::write(&swagger, r#"{"swagger": "2.0", "paths": {}}"#).unwrap();
    let bad_param = dir.path().join("bad.json");
    std::fs::write(
        &bad_param,
        r#"{"openapi": "3.0.0", "paths": {"/a": {"get": {"parameters": [{"in": "query"}]}}}}"#,
    )
    .unwrap();
    let toml = dir.path().join("pgcost.toml");
    std::fs::write(
        &toml,
        "[survey]\nopenapi = [\"bad.json\"]\nmax_share = 0.2\n",
    )
    .unwrap();
    let cases: [(&[&str], &Path, &str); 3] = [
        (
            &["--openapi"],
            &swagger,
            "swagger.json: /openapi: expected \"3.x\"",
        ),
        (
            &["--openapi"],
            &bad_param,
            "bad.json: /paths/~1a/get/parameters/0: a parameter needs a name",
        ),
        (
            &["--config"],
            &toml,
            "pgcost.toml:3:1: unknown field `max_share`",
        ),
    ];
    for (flag, path, message) in cases {
        let out = pgcost()
            .arg("survey")
            .args(flag)
            .arg(path)
            .args(["--base-url", "http://127.0.0.1:1"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(message), "{message}: {stderr}");
    }
}
