//! `pgcost check --baseline` names the SQL: a baseline written on "main", then the fixture
//! endpoint changed (one new statement, one called twice as often) and checked against it
//! in the table, Markdown and JSON views, with `new_statements = 0` failing the run; a
//! new finding failing `fail_on_findings` until it is acknowledged; and the same check
//! against unchanged endpoints, which reports no statement change and passes.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use pgcost::commands::check::CheckReport;
use support::TestDb;
use support::fixture::Fixture;

const SMALL_LOOKUP: &str = "SELECT label FROM small WHERE id = $1";
const ITEM_LOOKUP: &str = "SELECT name FROM items WHERE id = $1";
const NEW_COUNT: &str = "SELECT count(*) FROM small";

/// pgcost.toml for three endpoints: `evolve` (at `version`), `steady` (never changes) and
/// `gate` (the EXISTS permission probe on main, the naive one on the branch). `acks` is
/// appended to the file, after the last endpoint (gate).
fn write_config(dir: &Path, app: &str, version: &str, gate: &str, acks: &str) -> PathBuf {
    let head = head(app);
    let text = format!(
        r#"{head}
[[endpoint]]
name = "evolve"
path = "/evolve{version}"

[endpoint.budget]
new_statements = 0

[[endpoint]]
name = "steady"
path = "/tx"

[endpoint.budget]
new_statements = 0

[[endpoint]]
name = "gate"
path = "/perms-{gate}"

[endpoint.budget]
fail_on_findings = "high"
{acks}"#
    );
    let path = dir.join("pgcost.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// The file's first tables: the fixture, the database and the load of every endpoint.
fn head(app: &str) -> String {
    format!(
        r#"base_url = "{app}"

[database]
url_env = "CHECK_DB_URL"

[defaults]
requests = 40
concurrency = 2
warmup = 20
"#
    )
}

/// Runs `pgcost check` off the runtime's worker threads, which serve the fixture.
async fn check(db: &TestDb, dir: &Path, extra: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgcost"));
    for var in support::CALLER_VARS {
        cmd.env_remove(var);
    }
    cmd.arg("check")
        .args(["--config", "pgcost.toml"])
        .args(extra)
        .env("CHECK_DB_URL", db.url())
        .env("GITHUB_STEP_SUMMARY", dir.join("summary.md"))
        .current_dir(dir);
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

fn read_report(path: &Path) -> CheckReport {
    let text = std::fs::read_to_string(path).unwrap();
    support::assert_schema("check", &text);
    serde_json::from_str(&text).unwrap()
}

fn calls(report: &CheckReport, endpoint: &str, query: &str) -> Option<f64> {
    let e = report
        .endpoints
        .iter()
        .find(|e| e.name == endpoint)
        .unwrap();
    (e.report.statements.iter())
        .find(|s| s.query == query)
        .map(|s| s.calls_per_request)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_against_a_baseline_names_the_statements_that_changed() {
    let db = TestDb::start().await;
    let app = Fixture::start(&db.url(), 2).await;
    let dir = tempfile::tempdir().unwrap();
    let base = format!("http://{}", app.addr);

    // main: the baseline.
    write_config(dir.path(), &base, "", "exists", "");
    let output = check(
        &db,
        dir.path(),
        &["--write-baseline", "main.json", "--quiet"],
    )
    .await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let main = read_report(&dir.path().join("main.json"));
    assert_eq!(calls(&main, "evolve", SMALL_LOOKUP), Some(1.0));
    assert_eq!(calls(&main, "evolve", ITEM_LOOKUP), Some(1.0));
    assert_eq!(calls(&main, "evolve", NEW_COUNT), None);
    let gate = &main.endpoints[2];
    assert!(
        (gate.findings.iter()).all(|f| f.finding.kind != "collection_to_boolean"),
        "{:?}",
        gate.findings
    );

    // The branch: evolve at v2, gate on the naive permission query.
    write_config(dir.path(), &base, "?v=2", "naive", "");
    std::fs::remove_file(dir.path().join("summary.md")).unwrap();
    let output = check(
        &db,
        dir.path(),
        &[
            "--baseline",
            "main.json",
            "--write-baseline",
            "branch.json",
            "--quiet",
        ],
    )
    .await;
    let table = String::from_utf8_lossy(&output.stdout).into_owned();
    println!("{table}");
    assert_eq!(
        output.status.code(),
        Some(1),
        "{table}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );

    // JSON: the full lists, exact by construction.
    let branch = read_report(&dir.path().join("branch.json"));
    assert_eq!(branch.endpoints[0].name, "evolve");
    let diff = branch.endpoints[0].statement_diff.as_ref().unwrap();
    let added: Vec<(&str, Option<f64>)> = (diff.added.iter())
        .map(|c| (c.query.as_str(), c.calls_per_request))
        .collect();
    assert_eq!(added, vec![(NEW_COUNT, Some(1.0))]);
    let changed: Vec<(&str, Option<f64>, Option<f64>)> = (diff.calls_changed.iter())
        .map(|c| {
            (
                c.query.as_str(),
                c.baseline_calls_per_request,
                c.calls_per_request,
            )
        })
        .collect();
    assert_eq!(changed, vec![(ITEM_LOOKUP, Some(1.0), Some(2.0))]);
    assert!(diff.removed.is_empty(), "{diff:?}");
    assert!(diff.added[0].queryid.is_some());
    let steady = branch.endpoints[1].statement_diff.as_ref().unwrap();
    assert!(steady.is_empty(), "{steady:?}");
    let breaches: Vec<(String, f64)> = (branch.endpoints[0].breaches.iter())
        .map(|b| (b.metric.to_string(), b.actual))
        .collect();
    assert_eq!(breaches, vec![("new_statements".to_string(), 1.0)]);
    assert!(branch.endpoints[1].breaches.is_empty());
    let gate = &branch.endpoints[2];
    let naive = (gate.findings.iter())
        .find(|f| f.finding.kind == "collection_to_boolean")
        .unwrap();
    assert_eq!(
        (naive.new, naive.finding.severity.as_str()),
        (Some(true), "high")
    );
    assert!(
        gate.breaches
            .iter()
            .any(|b| b.metric.to_string() == "fail_on_findings"),
        "{:?}",
        gate.breaches
    );

    // The table: a short diff naming both statements.
    assert!(
        table.contains(&format!("- evolve: + {NEW_COUNT} (1.00 per request)\n")),
        "{table}"
    );
    assert!(
        table.contains(&format!(
            "- evolve: ~ {ITEM_LOOKUP} (1.00 → 2.00 per request)\n"
        )),
        "{table}"
    );
    assert!(table.contains("- steady: no statement change\n"), "{table}");
    assert!(
        table.contains(&format!(
            "- evolve: 1 new statement(s), budget 0: {NEW_COUNT}\n"
        )),
        "{table}"
    );
    // Markdown, for the pull request: a diff block.
    let markdown = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(
        markdown.contains(&format!(
            "```diff\n@@ evolve @@\n+ {NEW_COUNT} (1.00 per request)\n- {ITEM_LOOKUP} (1.00 per request)\n+ {ITEM_LOOKUP} (2.00 per request)\n"
        )),
        "{markdown}"
    );

    assert!(
        markdown.contains("\n@@ steady: no statement change @@\n"),
        "{markdown}"
    );

    // Back to the statements of main, the new finding acknowledged, and a stale ack:
    // no statement change on evolve and steady, and the run passes.
    let acks = format!(
        "\n[[endpoint.ack]]\nkind = \"collection_to_boolean\"\nstatement = \"group_grants\"\n\
         reason = \"fixed in #123; the rewrite ships next release\"\nexpires = \"2999-01-01\"\n\n\
         [[endpoint.ack]]\nkind = \"n_plus_one\"\nstatement = \"{SMALL_LOOKUP}\"\nreason = \"stale\"\n"
    );
    write_config(dir.path(), &base, "", "naive", &acks);
    std::fs::remove_file(dir.path().join("summary.md")).unwrap();
    let output = check(
        &db,
        dir.path(),
        &[
            "--baseline",
            "main.json",
            "--format",
            "json",
            "-o",
            "again.json",
            "--quiet",
        ],
    )
    .await;
    let again = read_report(&dir.path().join("again.json"));
    assert_eq!(
        output.status.code(),
        Some(0),
        "{:#?}",
        again
            .endpoints
            .iter()
            .map(|e| &e.breaches)
            .collect::<Vec<_>>()
    );
    for e in &again.endpoints[..2] {
        assert!(
            e.statement_diff.as_ref().unwrap().is_empty(),
            "{}: {:?}",
            e.name,
            e.statement_diff
        );
    }
    let gate = &again.endpoints[2];
    let naive = (gate.findings.iter())
        .find(|f| f.finding.kind == "collection_to_boolean")
        .unwrap();
    assert_eq!(
        naive.acknowledged.as_deref(),
        Some("fixed in #123; the rewrite ships next release")
    );
    assert_eq!(
        gate.acks[0].matched,
        vec![naive.finding.fingerprint.clone()]
    );
    assert!(
        gate.acks[1].matched.is_empty(),
        "the stale ack matches nothing"
    );
    let markdown = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(
        markdown.contains("@@ evolve: no statement change @@"),
        "{markdown}"
    );
    assert!(
        markdown.contains("- gate acknowledged: collection_to_boolean `SELECT g.action"),
        "{markdown}"
    );
    assert!(
        markdown.contains(
            "- gate ack n_plus_one `SELECT label FROM small WHERE id = $1` at pgcost.toml:"
        ),
        "{markdown}"
    );
}

/// The table on stdout, once the run exited with `code`.
fn exited(output: &Output, code: i32) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(code), "{stdout}\n{stderr}");
    stdout
}

/// pgcost.toml for the same filter twice: `gated` by `[defaults] fail_on_plan_change`,
/// `reported` with it turned off in its budget.
fn write_plan_config(dir: &Path, app: &str) {
    let head = head(app);
    let text = format!(
        r#"{head}fail_on_plan_change = true

[[endpoint]]
name = "gated"
path = "/plans/filter"

[[endpoint]]
name = "reported"
path = "/plans/filter"

[endpoint.budget]
fail_on_plan_change = false
"#
    );
    std::fs::write(dir.join("pgcost.toml"), text).unwrap();
}

const PLAN_FILTER: &str = "SELECT id, total FROM plan_orders WHERE customer_ref = $1";
const INDEX: &str = "plan_orders_customer_idx";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_index_is_a_plan_change_that_fail_on_plan_change_fails() {
    let db = TestDb::start().await;
    db.seed_plan_orders().await;
    let app_db = db.connect(support::DB).await;
    app_db
        .batch_execute(&format!(
            "CREATE INDEX {INDEX} ON plan_orders (customer_ref)"
        ))
        .await
        .unwrap();
    let app = Fixture::start(&db.url(), 2).await;
    let dir = tempfile::tempdir().unwrap();
    write_plan_config(dir.path(), &format!("http://{}", app.addr));

    let output = check(
        &db,
        dir.path(),
        &["--write-baseline", "main.json", "--quiet"],
    )
    .await;
    exited(&output, 0);
    let main = read_report(&dir.path().join("main.json"));
    let indexed = |report: &CheckReport, endpoint: usize| -> Vec<String> {
        let statement = (report.endpoints[endpoint].report.statements.iter())
            .find(|s| s.query == PLAN_FILTER)
            .expect("the filter's statement");
        statement.plan_shape.clone().expect("a plan shape")
    };
    let before = indexed(&main, 0);
    assert!(before.iter().any(|n| n.contains(INDEX)), "{before:?}");
    assert_eq!(indexed(&main, 1), before);
    assert_eq!(main.endpoints[0].budget.fail_on_plan_change, Some(true));
    assert_eq!(main.endpoints[1].budget.fail_on_plan_change, Some(false));

    app_db
        .batch_execute(&format!("DROP INDEX {INDEX}"))
        .await
        .unwrap();
    let output = check(
        &db,
        dir.path(),
        &[
            "--baseline",
            "main.json",
            "--quiet",
            "--export",
            "json=branch.json",
            "--export",
            "markdown=branch.md",
            "--export",
            "junit=branch.xml",
            "--export",
            "html=branch.html",
        ],
    )
    .await;
    let table = exited(&output, 1);
    println!("{table}");
    let branch = read_report(&dir.path().join("branch.json"));
    let after = vec!["Seq Scan on public.plan_orders".to_string()];
    for (i, e) in branch.endpoints.iter().enumerate() {
        assert_eq!(indexed(&branch, i), after, "{}", e.name);
        let diff = e.statement_diff.as_ref().expect("a statement diff");
        assert_eq!(diff.plan_changed.len(), 1, "{diff:?}");
        let change = &diff.plan_changed[0];
        assert_eq!(change.query, PLAN_FILTER);
        assert_eq!(change.baseline_plan, before);
        assert_eq!(change.plan, after);
        assert_eq!(change.before, before);
        assert_eq!(change.after, after);
        assert!(change.index_replaced);
    }
    let summary = branch.endpoints[0]
        .statement_diff
        .as_ref()
        .unwrap()
        .plan_changed[0]
        .summary();
    assert_eq!(
        summary,
        format!("{} → Seq Scan on public.plan_orders", before.join(", "))
    );
    // Failed where the gate is on, reported where it is off.
    let metrics = |e: usize| -> Vec<(String, f64)> {
        (branch.endpoints[e].breaches.iter())
            .map(|b| (b.metric.to_string(), b.actual))
            .collect()
    };
    assert_eq!(metrics(0), vec![("fail_on_plan_change".to_string(), 1.0)]);
    assert_eq!(metrics(1), vec![]);
    assert_eq!(
        branch.endpoints[0].breaches[0].detail.as_deref(),
        Some(format!("{PLAN_FILTER}: {summary}").as_str())
    );

    // Every view names the change, old shape and new.
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    let markdown = read("branch.md");
    assert!(
        markdown.contains(&format!("- plan of {PLAN_FILTER}: {}", before.join(", ")))
            && markdown.contains(&format!(
                "+ plan of {PLAN_FILTER}: Seq Scan on public.plan_orders"
            )),
        "{markdown}"
    );
    // The table cuts the statement at 56 characters.
    let cut = &PLAN_FILTER[..55];
    assert!(
        table.contains(&format!("- reported: ~ plan of {cut}…: {summary}\n")),
        "{table}"
    );
    let line = format!("plan changed: {PLAN_FILTER}: {summary}");
    let junit = read("branch.xml");
    assert!(junit.contains("type=\"budget\""), "{junit}");
    assert_eq!(junit.matches(&line).count(), 2, "{junit}");
    let html = read("branch.html");
    assert_eq!(html.matches(&line).count(), 2, "{html}");
}
