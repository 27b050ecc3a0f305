//! `--format sarif` end to end: a real audit and a real check of the fixture's N+1 page
//! (side by side, each in its own database), both validated against the OASIS SARIF 2.1.0
//! schema by Python's jsonschema (`tests/support/validate_sarif.py`; `.ci/run` installs
//! it), and their results checked against what the page is known to do.

mod support;

use std::path::Path;

use serde_json::Value;
use support::fixture::Fixture;
use support::{SMALL, TestDb, pgcost, validate_sarif as validate};

const N_PLUS_ONE: &str = "SELECT label FROM small WHERE id = $1";

fn results(log: &Value) -> &Vec<Value> {
    log["runs"][0]["results"].as_array().unwrap()
}

fn rule_ids(log: &Value) -> Vec<&str> {
    let rules = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    rules.iter().map(|r| r["id"].as_str().unwrap()).collect()
}

/// The one result of `rule`.
fn result<'a>(log: &'a Value, rule: &str) -> &'a Value {
    let found: Vec<&Value> = (results(log).iter())
        .filter(|r| r["ruleId"] == rule)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one {rule} in {:#}",
        log["runs"][0]["results"]
    );
    found[0]
}

/// The N+1 of the page: its statement, ten times per request, nine round trips too many
/// (at least 3 per request is high severity, so an error).
fn assert_n_plus_one(log: &Value, endpoint: &str, request: &str) {
    let r = result(log, "n_plus_one");
    assert_eq!(r["level"], "error");
    let message = r["message"]["text"].as_str().unwrap();
    assert!(message.contains(N_PLUS_ONE), "{message}");
    assert!(message.contains("saves 9 statements"), "{message}");
    assert_eq!(
        r["properties"]["evidence"]["calls_per_request"],
        SMALL as f64
    );
    let at = &r["locations"][0]["logicalLocations"];
    assert_eq!(at[0]["kind"], "function");
    assert_eq!(at[0]["name"], endpoint);
    assert_eq!(at[0]["fullyQualifiedName"], request);
    assert_eq!(at[1]["kind"], "member");
    assert_eq!(at[1]["fullyQualifiedName"], N_PLUS_ONE);
}

/// The Rails-style source tree whose model declares `small` (tests/source.rs).
fn rails() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/source/rails")
}

fn write_config(dir: &Path, base_url: &str) -> std::path::PathBuf {
    let source = rails();
    let text = format!(
        r#"base_url = "{base_url}"
source = "{}"

[database]
url_env = "SARIF_DB_URL"

[defaults]
requests = 60
concurrency = 4

[[endpoint]]
name = "n-plus-one"
path = "/n-plus-one"

[endpoint.budget]
statements = 1
forbid = ["n_plus_one"]
"#,
        source.display()
    );
    let path = dir.join("pgcost.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_and_check_write_valid_sarif_naming_the_n_plus_one() {
    let db = TestDb::start().await;
    db.create_seeded_database("sarif_check").await;
    let audited = Fixture::start(&db.url(), 4).await;
    let checked = Fixture::start(&db.cluster.url("sarif_check"), 4).await;
    let dir = tempfile::tempdir().unwrap();
    let audit_file = dir.path().join("audit.sarif");
    let check_file = dir.path().join("check.sarif");
    let github_file = dir.path().join("check.github");

    let audit_url = audited.url("/n-plus-one");
    let mut audit = pgcost();
    audit
        .args(["audit", "-q", "-n", "60", "-c", "4", "--format", "sarif"])
        .args(["--url", &audit_url, "--db", &db.url(), "--source"])
        .arg(rails())
        .arg("-o")
        .arg(&audit_file);
    let mut check = pgcost();
    check
        .current_dir(dir.path())
        .args(["check", "-q", "--format", "sarif", "--config"])
        .arg(write_config(dir.path(), &checked.url("")))
        .arg("-o")
        .arg(&check_file)
        .arg("--export")
        .arg(format!("github={}", github_file.display()))
        .env("SARIF_DB_URL", db.cluster.url("sarif_check"));
    let audit = std::thread::spawn(move || audit.assert());
    let check = std::thread::spawn(move || check.assert());
    audit.join().unwrap().code(0);
    check.join().unwrap().code(1);

    let (valid, text) = validate(&[&audit_file, &check_file]);
    println!("{text}");
    assert!(valid, "{text}");
    // The validator refuses what the schema does: a level SARIF does not have.
    let wrong = dir.path().join("wrong.sarif");
    let mut log: Value =
        serde_json::from_str(&std::fs::read_to_string(&check_file).unwrap()).unwrap();
    log["runs"][0]["results"][0]["level"] = "fatal".into();
    std::fs::write(&wrong, log.to_string()).unwrap();
    let (valid, text) = validate(&[&wrong]);
    assert!(!valid && text.contains("/runs/0/results/0/level"), "{text}");

    let read = |path: &Path| -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let audit = read(&audit_file);
    assert_eq!(audit["version"], "2.1.0");
    assert_eq!(audit["runs"][0]["tool"]["driver"]["name"], "pgcost");
    for id in ["n_plus_one", "round_trips", "collection_to_boolean"] {
        assert!(rule_ids(&audit).contains(&id), "{id}");
    }
    let request = format!("GET {audit_url}");
    assert_n_plus_one(&audit, &request, &request);

    let check = read(&check_file);
    for id in ["n_plus_one", "budget_exceeded", "forbidden_finding"] {
        assert!(rule_ids(&check).contains(&id), "{id}");
    }
    let request = format!("GET {}", checked.url("/n-plus-one"));
    assert_n_plus_one(&check, "n-plus-one", &request);
    let over = result(&check, "budget_exceeded");
    assert_eq!(over["level"], "error");
    assert_eq!(
        over["message"]["text"],
        format!(
            "n-plus-one: over budget: statements {:.2} per request, budget 1",
            (1 + SMALL) as f64
        )
    );
    let forbidden = result(&check, "forbidden_finding");
    assert_eq!(forbidden["level"], "error");
    let message = forbidden["message"]["text"].as_str().unwrap();
    assert!(
        message.contains("forbidden finding n_plus_one (1 found)"),
        "{message}"
    );
    assert_in_code(&audit, &check);

    // `--format github`: the budget failures at their keys, then the N+1 at its SQL.
    let github = std::fs::read_to_string(&github_file).unwrap();
    let lines: Vec<&str> = github.lines().collect();
    assert_eq!(
        lines[0],
        format!(
            "::error file=pgcost.toml,line=16,title=pgcost%3A n-plus-one over budget::\
             n-plus-one: over budget: statements {:.2} per request, budget 1",
            (1 + SMALL) as f64
        )
    );
    assert!(
        lines[1].starts_with("::error file=pgcost.toml,line=17,"),
        "{github}"
    );
    assert!(
        (lines.iter()).any(|l| l.starts_with(
            "::error file=app/controllers/labels_controller.rb,line=6,title=pgcost%3A n_plus_one::"
        )),
        "{github}"
    );
    assert!(lines.len() <= 10, "{github}");
}

/// GitHub's rules hold for every result with a place in the code: the N+1 points at the
/// model of `small` (literal SQL first: the controller that writes it out), the budget
/// failures at their keys in pgcost.toml. The results without a place (round_trips: no
/// table, no statement) break GH1001 only, as docs/ci.md says: code scanning hides them.
fn assert_in_code(audit: &Value, check: &Value) {
    let physical = |r: &Value| r["locations"][0]["physicalLocation"].clone();
    for log in [audit, check] {
        let n_plus_one = physical(result(log, "n_plus_one"));
        assert_eq!(
            n_plus_one,
            serde_json::json!({
                "artifactLocation": {"uri": "app/controllers/labels_controller.rb"},
                "region": {"startLine": 6}
            })
        );
        for violation in support::github_sarif::violations(log) {
            let index: usize = violation
                .rsplit(['[', ']'])
                .nth(1)
                .unwrap()
                .parse()
                .unwrap();
            let r = &results(log)[index];
            assert!(
                violation.starts_with("GH1001") && physical(r).is_null(),
                "{violation}: {r:#}"
            );
        }
    }
    let at = |rule: &str| physical(result(check, rule));
    assert_eq!(
        at("budget_exceeded")["artifactLocation"]["uri"],
        "pgcost.toml"
    );
    assert_eq!(at("budget_exceeded")["region"]["startLine"], 16);
    assert_eq!(at("forbidden_finding")["region"]["startLine"], 17);
    let round_trips = result(audit, "round_trips");
    assert!(physical(round_trips).is_null());
    // A fingerprint that holds across runs: the endpoint and the finding's, or the limit's.
    assert_eq!(
        result(check, "budget_exceeded")["partialFingerprints"]["pgcostFailure/v1"],
        "n-plus-one|statements"
    );
    assert!(
        result(check, "n_plus_one")["partialFingerprints"]["pgcostFinding/v1"]
            .as_str()
            .unwrap()
            .starts_with("n-plus-one|n_plus_one:")
    );
}
