//! `pgcost check` end to end: pgcost.toml errors with their position, and the demo API's
//! three pipelines checked against one budget in shared settle windows (exit 1, JUnit,
//! Markdown step summary, baseline), then one by one (exit 0 within budget and against
//! the baseline), with the wall time of both ways printed.

mod support;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use pgcost::commands::check::CheckReport;
use pgcost::commands::demo::{self, api::Pipeline};
use pgcost::progress::Progress;

/// The binary, without the caller's database, credential or CI variables.
fn pgcost() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgcost"));
    for var in support::CALLER_VARS {
        cmd.env_remove(var);
    }
    cmd
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn config_errors_are_usage_errors_with_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pgcost.toml");
    let cases: &[(&str, &str)] = &[
        (
            "base_url = \"http://127.0.0.1:9\"\n\n[[endpoint]]\nname = \"a\"\npath = \"/a\"\nrequets = 5\n",
            ":6:1: unknown field `requets`",
        ),
        (
            "base_url = \"http://127.0.0.1:9\"\n[[endpoint]]\nname = \"a\"\npath = \"/a\"\n[endpoint.budget]\nrows_read = \"many\"\n",
            ":6:13: invalid type: string \"many\"",
        ),
        (
            "base_url = \"http://127.0.0.1:9\"\n[[endpoint]]\nname = \"a\"\npath = \"a\"\n",
            ":4:8: path \"a\" must start with /",
        ),
        (
            "base_url = \"http://127.0.0.1:9\"\n[[endpoint]]\nname = \"a\"\npath = \"/a\"\n[[endpoint]]\nname = \"a\"\npath = \"/b\"\n",
            ":6:8: duplicate endpoint name \"a\" (first defined on line 3)",
        ),
    ];
    for (text, message) in cases {
        std::fs::write(&path, text).unwrap();
        let output = pgcost()
            .args(["check", "--config"])
            .arg(&path)
            .output()
            .unwrap();
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{err}");
        assert!(
            err.starts_with(&format!("error: {}{message}", path.display())),
            "{err}"
        );
        assert!(
            err.contains("hint:") || message.contains("duplicate"),
            "{err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }

    let output = pgcost()
        .args(["check", "--config", "/nonexistent/pgcost.toml"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("cannot read /nonexistent/pgcost.toml"));

    let output = pgcost()
        .args(["check", "--max-regression", "10%"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("--baseline"),
        "{}",
        stderr(&output)
    );
}

/// The same budget for every pipeline: exists and cached meet it, naive does not.
fn write_config(dir: &Path, api: &str) -> std::path::PathBuf {
    let mut text = format!(
        r#"base_url = "{api}"

[database]
url_env = "CHECK_DB_URL"

[defaults]
requests = 40
concurrency = 4
# Ten requests per pooled connection, past the switch to generic plans.
warmup = 40

[auth]
bearer_env = "DEMO_TOKEN"
"#
    );
    for pipeline in Pipeline::ALL {
        text.push_str(&format!(
            r#"
[[endpoint]]
name = "{name}"
path = "/{name}/api/v1/projects?limit=20"

[endpoint.budget]
transactions = 6
statements = 6
rows_read = 60
rows_returned = 30
p95_ms = 5000
forbid = ["collection_to_boolean"]
"#,
            name = pipeline.name()
        ));
    }
    let path = dir.join("pgcost.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs the binary off the runtime's worker threads, which serve the demo API.
async fn run(cmd: Command) -> (Output, Duration) {
    tokio::task::spawn_blocking(move || {
        let mut cmd = cmd;
        let start = Instant::now();
        let output = cmd.output().unwrap();
        (output, start.elapsed())
    })
    .await
    .unwrap()
}

fn read_report(path: &Path) -> CheckReport {
    let text = std::fs::read_to_string(path).unwrap();
    support::assert_schema("check", &text);
    serde_json::from_str(&text).unwrap()
}

/// Statements per request of each pipeline, from its code (src/commands/demo/api.rs): tenant,
/// session and entitlement lookups, the permission question asked twice, the listing.
fn expected_statements(pipeline: &str) -> f64 {
    match pipeline {
        "naive" => 3.0 + 2.0 * 3.0 + 1.0,
        "exists" => 3.0 + 2.0 + 1.0,
        // The tenant and the permission decision come from the TTL cache.
        _ => 2.0 + 1.0,
    }
}

/// Parses JUnit XML, failing if it is not well-formed: (testcase, failure messages).
fn junit_cases(text: &str) -> Vec<(String, Vec<String>)> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(text);
    let mut cases: Vec<(String, Vec<String>)> = Vec::new();
    let attr = |e: &quick_xml::events::BytesStart, name: &str| {
        e.try_get_attribute(name)
            .unwrap()
            .map(|a| {
                a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                    .unwrap()
                    .into_owned()
            })
            .unwrap_or_default()
    };
    loop {
        match reader.read_event().expect("well-formed JUnit XML") {
            Event::Start(e) if e.name().as_ref() == "testcase" => {
                cases.push((attr(&e, "name"), Vec::new()))
            }
            Event::Start(e) if e.name().as_ref() == "failure" => {
                cases.last_mut().unwrap().1.push(attr(&e, "message"))
            }
            Event::Eof => break,
            _ => {}
        }
    }
    cases
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_pipelines_checked_in_shared_settle_windows() {
    // A TTL far longer than the test, so the cached pipeline never expires mid-run.
    let env = demo::setup(Duration::from_secs(3600), &Progress::hidden())
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let api = format!("http://{}", env.api.addr);
    let config = write_config(dir.path(), &api);
    let command = |extra: &[&str]| {
        let mut cmd = pgcost();
        cmd.arg("check")
            .arg("--config")
            .arg(&config)
            .args(extra)
            .env("CHECK_DB_URL", &env.db_url)
            .env("DEMO_TOKEN", &env.token)
            .current_dir(dir.path());
        cmd
    };

    // All three in one sequence: 4 settle waits.
    let mut cmd = command(&[
        "--format",
        "junit",
        "-o",
        "junit.xml",
        "--write-baseline",
        "baseline.json",
    ]);
    cmd.env("GITHUB_STEP_SUMMARY", dir.path().join("summary.md"));
    let (output, shared) = run(cmd).await;
    let err = stderr(&output);
    let report = read_report(&dir.path().join("baseline.json"));
    // On failure, every endpoint's figures and breaches, to tell a leak from a regression.
    let figures: Vec<String> = (report.endpoints.iter())
        .map(|e| {
            format!(
                "{}: {:?} breaches {:?} warnings {:?}",
                e.name, e.report.per_request, e.breaches, e.report.notes
            )
        })
        .collect();
    assert_eq!(
        output.status.code(),
        Some(1),
        "naive is over budget: {err}\n{figures:#?}"
    );
    assert!(
        err.contains("pgcost check, 3 endpoint(s): 1 over budget"),
        "{err}\n{figures:#?}"
    );

    assert!(report.valid, "{report:#?}");
    assert!(!report.passed);
    for e in &report.endpoints {
        let p = &e.report.per_request;
        assert!(e.report.valid, "{}: {:?}", e.name, e.report.invalid_reasons);
        assert_eq!(
            p.statements,
            Some(expected_statements(&e.name)),
            "{}",
            e.name
        );
        assert_eq!(p.transactions, expected_statements(&e.name), "{}", e.name);
        assert_eq!(p.new_sessions, Some(0.0), "{}", e.name);
    }
    let naive = &report.endpoints[0];
    let breached: Vec<String> = naive
        .breaches
        .iter()
        .map(|b| b.metric.to_string())
        .collect();
    assert_eq!(
        breached,
        vec![
            "transactions",
            "statements",
            "rows_read",
            "rows_returned",
            "collection_to_boolean"
        ]
    );
    assert!(report.endpoints[1].breaches.is_empty(), "{report:#?}");
    assert!(report.endpoints[2].breaches.is_empty(), "{report:#?}");
    // Consecutive endpoints share a wait: each window after the first opens where the
    // previous one closed, without a settle of its own beyond the table read.
    for pair in report.endpoints.windows(2) {
        let (before, after) = (&pair[0].report.settle, &pair[1].report.settle);
        assert!(
            (after.before_seconds - before.after_seconds) < 2.0,
            "{before:?} {after:?}"
        );
    }

    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    let cases = junit_cases(&junit);
    let names: Vec<&str> = cases.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, vec!["naive", "exists", "cached"]);
    assert_eq!(cases[0].1.len(), 5, "{junit}");
    assert!(
        cases[0].1[1].starts_with("over budget: statements 10.00 per request, budget 6"),
        "{junit}"
    );
    assert!(cases[1].1.is_empty() && cases[2].1.is_empty(), "{junit}");
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(summary.starts_with("### ❌ pgcost check, 3 endpoint(s): 1 over budget"));
    assert!(summary.contains("| ❌ | naive"), "{summary}");

    // One by one: 2 settle waits each. Exists and cached are within budget, and nothing
    // regressed against the shared run.
    let mut one_by_one = Duration::ZERO;
    for (i, pipeline) in Pipeline::ALL.iter().enumerate() {
        let name = pipeline.name();
        let out = format!("{name}.json");
        let (output, took) = run(command(&[
            "--endpoint",
            name,
            "--format",
            "json",
            "-o",
            &out,
            "--baseline",
            "baseline.json",
            "--max-regression",
            "5%",
            "--quiet",
        ]))
        .await;
        one_by_one += took;
        let expected = if *pipeline == Pipeline::Naive { 1 } else { 0 };
        assert_eq!(
            output.status.code(),
            Some(expected),
            "{name}: {}",
            stderr(&output)
        );
        let single = read_report(&dir.path().join(&out));
        assert_eq!(single.endpoints.len(), 1);
        let e = &single.endpoints[0];
        assert_eq!(e.name, name);
        assert!(e.regressions.is_empty(), "{name}: {:?}", e.regressions);
        let statements = e
            .deltas
            .iter()
            .find(|d| d.metric.key() == "statements")
            .unwrap();
        assert_eq!(statements.change, 0.0, "{name}: sharing changes no figure");
        assert_eq!(
            e.report.per_request.rows_returned,
            report.endpoints[i].report.per_request.rows_returned,
            "{name}"
        );
    }
    let saved = one_by_one.as_secs_f64() - shared.as_secs_f64();
    println!(
        "pgcost check over 3 endpoints: {:.1} s in shared settle windows, {:.1} s one by one \
         (saved {saved:.1} s, {:.0}%)",
        shared.as_secs_f64(),
        one_by_one.as_secs_f64(),
        100.0 * saved / one_by_one.as_secs_f64()
    );
    assert!(
        saved > 15.0,
        "two settle waits of about 10.7 s each are saved"
    );
}
