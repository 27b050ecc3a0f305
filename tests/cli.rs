//! The binary's exit codes and messages: invalid runs exit 3 with their reason, bad input
//! exits 2 with one clear line, never a panic.

mod support;

use support::{pgcost, run_blocking};

use predicates::prelude::*;
use support::TestDb;
use support::fixture::Fixture;

#[test]
fn bad_input_is_a_usage_error_with_one_clear_line() {
    let cases: &[(&[&str], &str)] = &[
        (&["-n", "0"], "--requests must be at least 1"),
        (
            &["-n", "4", "-c", "8"],
            "--concurrency 8 is greater than --requests 4",
        ),
        (&["-H", "Authorization Bearer abc"], "has no colon"),
        (
            &["--db", "postgres://u:pw@h:notaport/d"],
            "not a valid connection string",
        ),
        (&["--timeout", "soon"], "--timeout is not a duration"),
        (
            &["--body", "{{sequence}}"],
            "unknown placeholder {{sequence}}",
        ),
        (
            &["-H", "X-Id: {{data.id}}"],
            "{{data.id}} needs --data FILE",
        ),
        (
            &["--data", "/no/such/ids.csv"],
            "--data: cannot read /no/such/ids.csv",
        ),
    ];
    for (extra, message) in cases {
        let mut cmd = pgcost();
        cmd.args(["audit", "--url", "http://127.0.0.1:9/x"]);
        if !extra.contains(&"--db") {
            cmd.args(["--db", "postgres://u@127.0.0.1:9/d"]);
        }
        cmd.args(*extra);
        cmd.assert()
            .code(2)
            .stderr(predicate::str::contains(*message))
            .stderr(predicate::str::contains("panicked").not())
            .stderr(predicate::str::contains("Bearer abc").not());
    }
    pgcost()
        .args(["audit", "--url", "not a url", "--db", "postgres://u@h/d"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is not a valid URL"));
}

#[test]
fn unreachable_database_is_a_setup_error() {
    let port = support::closed_port();
    pgcost()
        .args(["audit", "--url", "http://127.0.0.1:9/x"])
        .arg("--db")
        .arg(format!("postgres://app:hunter2@127.0.0.1:{port}/shop"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "cannot connect to postgres://app@127.0.0.1",
        ))
        .stderr(predicate::str::contains("hint:"))
        .stderr(predicate::str::contains("hunter2").not());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_show_the_server_text_and_refused_targets_fail_fast() {
    let db = TestDb::start().await;
    let mut cmd = pgcost();
    cmd.args([
        "audit",
        "--url",
        "http://127.0.0.1:9/x",
        "--db",
        &db.cluster.url("nope"),
    ]);
    run_blocking(cmd)
        .code(2)
        .stderr(predicate::str::contains("database \"nope\" does not exist"))
        .stderr(predicate::str::contains("db error").not());

    let closed = support::closed_port();
    let mut cmd = pgcost();
    cmd.args([
        "audit",
        "--db",
        &db.url(),
        "--url",
        &format!("http://127.0.0.1:{closed}/x"),
    ]);
    run_blocking(cmd).code(2).stderr(predicate::str::contains(
        "refused connections during the warm-up",
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejected_requests_make_the_report_invalid() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 2).await;
    // Without a warm-up, the rejected burst is measured and reported as not valid.
    let mut cmd = pgcost();
    cmd.args([
        "audit", "-n", "40", "-c", "2", "--warmup", "0", "--format", "json",
    ])
    .args(["--db", &db.url(), "--url", &app.url("/denied")]);
    let assert = run_blocking(cmd).code(3);
    let report: serde_json::Value = serde_json::from_slice(&assert.get_output().stdout).unwrap();
    assert_eq!(report["valid"], false);
    assert_eq!(report["invalid_reasons"][0]["code"], "rejected");
    assert_eq!(
        report["invalid_reasons"][0]["message"],
        "40 of 40 responses were 401: these numbers measure the rejection path, not the endpoint"
    );
    assert_eq!(report["load"]["status"]["401"], 40);
    assert_eq!(report["schema_version"], 1);

    let mut cmd = pgcost();
    cmd.args(["audit", "-n", "8", "-c", "2", "--warmup", "0"])
        .args(["--db", &db.url(), "--url", &app.url("/denied")]);
    run_blocking(cmd)
        .code(3)
        .stdout(predicate::str::starts_with(
            "NOT VALID: 8 of 8 responses were 401: these numbers measure the rejection path",
        ));
}

/// A warm-up whose every response is a rejection ends the run at once with exit 3 and the
/// reason: no burst, no settle wait, no report. `--allow-status` accepts it on purpose.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_warm_up_ends_the_run_before_any_settle_wait() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 2).await;
    let mut cmd = pgcost();
    cmd.args(["audit", "-n", "40", "-c", "2", "--warmup", "6"])
        .args(["--db", &db.url(), "--url", &app.url("/denied")]);
    let assert = run_blocking(cmd).code(3).stdout("");
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        // The warm-up floor goes out in two halves: the first (3), rejected whole, ends it.
        stderr.contains("was rejected (401 x3): the burst would measure the rejection path"),
        "{stderr}"
    );
    assert!(stderr.contains("hint: check the credentials"), "{stderr}");

    let mut cmd = pgcost();
    cmd.args([
        "audit",
        "-n",
        "8",
        "-c",
        "2",
        "--warmup",
        "2",
        "--allow-status",
        "401",
    ])
    .args([
        "--db",
        &db.url(),
        "--url",
        &app.url("/denied"),
        "--format",
        "json",
    ]);
    let assert = run_blocking(cmd).code(0);
    let report: serde_json::Value = serde_json::from_slice(&assert.get_output().stdout).unwrap();
    assert_eq!(report["load"]["status"]["401"], 8);
}

/// A ramp raises the load: steps or rates that do not ascend are refused before anything
/// is measured.
#[test]
fn ramp_steps_and_rates_must_ascend() {
    for (flag, list) in [("--steps", "4,2"), ("--rate", "200,100")] {
        pgcost()
            .args(["ramp", "--url", "http://127.0.0.1:9/x"])
            .args(["--db", "postgres://u@127.0.0.1:9/d", flag, list])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!(
                "{flag} \"{list}\" does not ascend"
            )))
            .stderr(predicate::str::contains("hint:"));
    }
}

/// `--export` takes a format of the command and a file no other rendering writes.
#[test]
fn exports_are_checked_before_anything_is_measured() {
    let cases: &[(&[&str], &str)] = &[
        (&["--export", "junit=r.xml"], "not a format of this command"),
        (&["--export", "json"], "is not FORMAT=PATH"),
        (
            &["-o", "r.json", "--export", "json=r.json"],
            "already writes",
        ),
        (
            &["--export", "json=a.json", "--export", "html=a.json"],
            "already writes",
        ),
    ];
    for (extra, message) in cases {
        pgcost()
            .args(["audit", "--url", "http://127.0.0.1:9/x"])
            .args(["--db", "postgres://u@127.0.0.1:9/d"])
            .args(*extra)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(*message))
            .stderr(predicate::str::contains("hint:"));
    }
}

/// Each command's `--help` lists only the formats it writes.
#[test]
fn help_lists_only_the_commands_formats() {
    let help = |command: &str| {
        let output = pgcost().args([command, "--help"]).output().unwrap();
        let text = String::from_utf8(output.stdout).unwrap();
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    assert!(help("check").contains("junit"));
    assert!(!help("audit").contains("junit"));
    assert!(help("demo").contains("markdown"));
    assert!(!help("demo").contains("junit"));
    assert!(help("audit").contains("sarif"));
    assert!(help("check").contains("sarif"));
    assert!(!help("ramp").contains("sarif"));
    assert!(!help("demo").contains("sarif"));
    assert!(help("measure").contains("the command's own stdout is sent to standard error"));
}

/// A request that may write needs `--allow-writes`: without it the run ends with exit 2
/// naming the flag, before the database is asked or any request sent. A GraphQL query
/// sent with POST is a read; a mutation needs the flag whatever its method.
#[test]
fn writes_need_consent_before_any_request() {
    let app = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    app.set_nonblocking(true).unwrap();
    let url = format!(
        "http://127.0.0.1:{}/items",
        app.local_addr().unwrap().port()
    );
    let graphql = format!(
        "http://127.0.0.1:{}/graphql",
        app.local_addr().unwrap().port()
    );
    let mutation = r#"{"query":"mutation { addItem(name: \"x\") { id } }"}"#;
    let refused: &[(&[&str], &str)] = &[
        (
            &["-X", "POST", "--body", r#"{"title":"x"}"#],
            "a POST request",
        ),
        (&["-X", "DELETE"], "a DELETE request"),
        (&["-X", "PATCH"], "a PATCH request"),
        (&["-X", "POST", "--body", mutation], "a POST request"),
    ];
    for (extra, what) in refused {
        pgcost()
            .args(["audit", "--url", &url, "--db", "postgres://u@127.0.0.1:9/d"])
            .args(*extra)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(*what))
            .stderr(predicate::str::contains("needs --allow-writes"))
            .stderr(predicate::str::contains("hint: pass --allow-writes"))
            .stderr(predicate::str::contains("--restore"));
    }
    let get_mutation = format!("{graphql}?query=mutation%20%7B%20addItem%20%7B%20id%20%7D%20%7D");
    pgcost()
        .args([
            "audit",
            "--url",
            &get_mutation,
            "--db",
            "postgres://u@127.0.0.1:9/d",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "a GraphQL mutation or subscription",
        ));
    assert!(app.accept().is_err(), "a request reached the app");
    // With consent, or for a GraphQL query sent with POST, the run goes on to the database
    // (closed here: exit 2 for the connection, not for consent).
    let query = r#"{"query":"{ items { id } }"}"#;
    let allowed: &[&[&str]] = &[
        &["-X", "POST", "--allow-writes"],
        &["-X", "POST", "--body", query],
    ];
    for extra in allowed {
        let port = support::closed_port();
        pgcost()
            .args(["audit", "--url", &graphql])
            .arg("--db")
            .arg(format!("postgres://u@127.0.0.1:{port}/d"))
            .args(*extra)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("cannot connect"))
            .stderr(predicate::str::contains("allow-writes").not());
    }
}
