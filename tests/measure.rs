//! `pgcost measure` around real load tools against the fixture app: autocannon (npm),
//! Locust in distributed mode (PyPI: one master, two workers on loopback), a plain curl
//! script with `--requests N`, a failing command, Ctrl-C, and the usage errors. Every
//! request of `/scan` costs exactly one statement in one transaction, reading and returning
//! all ITEMS rows, so each per-request figure is known by construction.
//!
//! The tests share one cluster (the last one to finish stops it); each measures its own
//! database, served by its own fixture app with a pool of one connection, warmed up before
//! the window.

mod support;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use support::fixture::Fixture;
use support::{ITEMS, TestDb, pgcost};

struct Shared {
    db: TestDb,
    runtime: tokio::runtime::Runtime,
}

/// The tests' databases, one each.
const DATABASES: [&str; 6] = [
    "m_autocannon",
    "m_tags",
    "m_locust",
    "m_given",
    "m_control",
    "m_ctrl_c",
];

/// The cluster shared by the tests that run at the same time.
fn shared() -> Arc<Shared> {
    static SHARED: Mutex<Weak<Shared>> = Mutex::new(Weak::new());
    let mut slot = SHARED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(shared) = slot.upgrade() {
        return shared;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // Every test's database is made now, before any test opens a window: creating and
    // seeding one writes thousands of catalog rows, and the invalidations that this
    // broadcasts make idle backends of the other databases run an empty transaction to
    // catch up, which would land in their windows as a transaction no request made.
    let db = runtime.block_on(async {
        let db = TestDb::start().await;
        for name in DATABASES {
            db.create_seeded_database(name).await;
        }
        db
    });
    let shared = Arc::new(Shared { db, runtime });
    *slot = Arc::downgrade(&shared);
    shared
}

/// One test's database and fixture app, warmed up: its one pooled connection is open and
/// has prepared `/scan`'s statement.
struct App {
    shared: Arc<Shared>,
    fixture: Option<Fixture>,
    db_url: String,
    dir: tempfile::TempDir,
}

impl App {
    fn start(name: &str) -> App {
        let shared = shared();
        let db_url = shared.db.cluster.url(name);
        assert!(DATABASES.contains(&name), "{name} is not in DATABASES");
        let fixture = shared.runtime.block_on(async {
            let fixture = Fixture::start(&db_url, 1).await;
            for _ in 0..10 {
                let body = reqwest::get(fixture.url("/scan")).await.unwrap();
                assert_eq!(body.text().await.unwrap(), ITEMS.to_string());
            }
            fixture
        });
        App {
            shared,
            fixture: Some(fixture),
            db_url,
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn url(&self, path: &str) -> String {
        self.fixture.as_ref().unwrap().url(path)
    }

    fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// An executable shell script in the test's directory.
    fn script(&self, name: &str, body: &str) -> String {
        use std::os::unix::fs::PermissionsExt;
        let path = self.file(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.display().to_string()
    }

    /// `pgcost measure --db <this database> ARGS -o report.json --format json`: its exit
    /// code, stdout (the command's, passed through: the report goes to a file) and report.
    fn measure(&self, args: &[&str]) -> (i32, String, serde_json::Value) {
        let report = self.file("report.json");
        let _ = std::fs::remove_file(&report);
        let mut cmd = pgcost();
        cmd.args([
            "measure",
            "--quiet",
            "--format",
            "json",
            "--db",
            &self.db_url,
            "-o",
        ])
        .arg(&report)
        .args(args);
        let output = cmd.output().unwrap();
        let code = output.status.code().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let text = std::fs::read_to_string(&report).unwrap_or_else(|e| {
            panic!(
                "exit {code}, no report ({e}): {}",
                String::from_utf8_lossy(&output.stderr)
            )
        });
        support::assert_schema("audit", &text);
        (code, stdout, serde_json::from_str(&text).unwrap())
    }
}

impl Drop for App {
    fn drop(&mut self) {
        // The app's tasks belong to the shared runtime; stop serving before it may go.
        let _guard = self.shared.runtime.enter();
        self.fixture.take();
    }
}

/// A tool the test needs: CI installs it (.ci/run); a missing one fails the test.
fn require(tool: &str, install: &str) {
    let found = std::process::Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .unwrap()
        .success();
    assert!(
        found,
        "{tool} is not installed; install it with `{install}` (.ci/run does)"
    );
}

/// Each figure of `/scan`, exactly: one statement in one transaction, a sequential scan
/// of the ITEMS rows, all returned.
fn assert_exact_scan(report: &serde_json::Value) {
    assert_eq!(report["valid"], true, "{:#}", report["invalid_reasons"]);
    let p = &report["per_request"];
    assert_eq!(p["transactions"], 1.0, "{p:#}");
    assert_eq!(p["statements"], 1.0, "{p:#}");
    assert_eq!(p["rows_read"], ITEMS as f64, "{p:#}");
    assert_eq!(p["rows_returned"], ITEMS as f64, "{p:#}");
    assert_eq!(p["rows_written"], 0.0, "{p:#}");
    assert_eq!(p["new_sessions"], 0.0, "{p:#}");
    let statements = report["statements"].as_array().unwrap();
    assert_eq!(statements.len(), 1, "{statements:#?}");
    assert_eq!(statements[0]["calls_per_request"], 1.0);
    assert_eq!(statements[0]["rows_per_call"], ITEMS as f64);
}

#[test]
fn autocannon_count_from_its_json() {
    require("autocannon", "npm install -g autocannon");
    let app = App::start("m_autocannon");
    let out = app.file("autocannon.json");
    let run = format!(
        "autocannon -a 300 -c 4 --json {} > {}",
        app.url("/scan"),
        out.display()
    );
    let count_from = format!("autocannon:{}", out.display());
    let (code, _, report) = app.measure(&["--count-from", &count_from, "--", "sh", "-c", &run]);
    assert_exact_scan(&report);
    assert_eq!(code, 0);
    let load = &report["load"];
    assert_eq!(load["source"], "autocannon");
    assert_eq!(load["requests"], 300);
    assert_eq!(load["command_exit"], 0);
    assert_eq!(report["target"]["url"], format!("sh -c {run}"));
}

/// Each Locust user sends 25 requests and stops: 4 users on 2 workers send exactly 100,
/// whatever the run time, which only has to outlast them.
const LOCUSTFILE: &str = r#"
from locust import HttpUser, task, constant
from locust.exception import StopUser

class Scan(HttpUser):
    wait_time = constant(0)
    sent = 0

    @task
    def scan(self):
        self.client.get("/scan")
        self.sent += 1
        if self.sent >= 25:
            raise StopUser()
"#;

#[test]
fn distributed_locust_count_from_its_csv() {
    require("locust", "pip install locust");
    let app = App::start("m_locust");
    let locustfile = app.file("locustfile.py");
    std::fs::write(&locustfile, LOCUSTFILE).unwrap();
    let port = support::closed_port();
    let (file, prefix) = (locustfile.display(), app.file("run").display().to_string());
    let worker = format!("locust -f {file} --worker --master-host 127.0.0.1 --master-port {port}");
    let script = app.script(
        "locust.sh",
        &format!(
            "{worker} & {worker} &\n\
             locust -f {file} --master --master-bind-host 127.0.0.1 --master-bind-port {port} \
             --expect-workers 2 --headless -u 4 -r 4 -t 8s --only-summary --csv {prefix} \
             -H {host}\ncode=$?\nwait\nexit $code",
            host = app.url("")
        ),
    );
    let count_from = format!("locust:{prefix}_stats.csv");
    let (code, _, report) = app.measure(&["--count-from", &count_from, "--", &script]);
    assert_exact_scan(&report);
    assert_eq!(code, 0);
    assert_eq!(report["load"]["source"], "locust");
    assert_eq!(report["load"]["requests"], 100);
    assert_eq!(report["load"]["command_exit"], 0);
}

#[test]
fn given_count_with_a_curl_script_and_a_failing_command() {
    let app = App::start("m_given");
    let url = app.url("/scan");
    let script = app.script(
        "load.sh",
        &format!(
            "for i in $(seq 1 40); do curl -sf {url} > /dev/null || exit 9; done\necho load-done"
        ),
    );
    let (code, stdout, report) = app.measure(&["--requests", "40", "--", &script]);
    assert_exact_scan(&report);
    assert_eq!(code, 0);
    assert_eq!(
        stdout.trim(),
        "load-done",
        "the command's stdout passes through"
    );
    assert_eq!(report["load"]["source"], "given");
    assert_eq!(report["load"]["requests"], 40);

    // The report on stdout: the command's stdout goes to stderr, so stdout is one JSON
    // document; under -q, the command's output is all there is on stderr. The same run
    // also writes its Markdown and HTML views (--export), from the one measurement.
    let (markdown, html) = (app.file("report.md"), app.file("report.html"));
    let output = pgcost()
        .args(["measure", "-q", "--format", "json", "--db", &app.db_url])
        .arg(format!("--export=markdown={}", markdown.display()))
        .arg(format!("--export=html={}", html.display()))
        .args(["--requests", "40", "--", &script])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}); stderr: {stderr}"));
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_exact_scan(&report);
    assert_eq!(report["load"]["requests"], 40);
    assert_eq!(
        stderr.trim(),
        "load-done",
        "the command's stdout, on stderr"
    );
    let markdown = std::fs::read_to_string(&markdown).unwrap();
    let statements = format!(
        "{:.2}",
        report["per_request"]["statements"].as_f64().unwrap()
    );
    assert!(
        markdown.contains("statements") && markdown.contains(&statements),
        "{markdown}"
    );
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(
        html.starts_with("<!DOCTYPE html>"),
        "{}",
        &html[..80.min(html.len())]
    );

    // Ten requests made, then exit 1: a report, not valid.
    let failing = format!("for i in $(seq 1 10); do curl -sf {url} > /dev/null; done; exit 1");
    let (code, _, report) = app.measure(&["-n", "10", "--", "sh", "-c", &failing]);
    assert_eq!(code, 3);
    assert_eq!(report["valid"], false);
    assert_eq!(report["load"]["command_exit"], 1);
    assert_eq!(report["per_request"]["statements"], 1.0);
    let exited = support::invalid(&report, "load_command_failed");
    assert!(exited.contains("exited with code 1"), "{exited}");

    // The same script as a `command` endpoint of `pgcost check`, run in the file's
    // directory, held to its exact budget.
    let toml = app.file("pgcost.toml");
    std::fs::write(
        &toml,
        format!(
            r#"base_url = "http://127.0.0.1:1"

[database]
url_env = "MEASURE_DB_URL"

[[endpoint]]
name = "scan by curl"
command = ["sh", "load.sh"]
requests = 40

[endpoint.budget]
transactions = 1
statements = 1
rows_read = {ITEMS}
rows_returned = {ITEMS}
"#
        ),
    )
    .unwrap();
    let output = pgcost()
        .args(["check", "--quiet", "--format", "json", "--config"])
        .arg(&toml)
        .env("MEASURE_DB_URL", &app.db_url)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        stderr.trim(),
        "load-done",
        "the command's stdout, on stderr"
    );
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{json:#}");
    let report = &json["endpoints"][0]["report"];
    assert_exact_scan(report);
    assert_eq!(report["load"]["source"], "given");
    assert_eq!(report["target"]["url"], "sh load.sh");
}

/// `--control`: a control window before the command and one after it, sized within
/// `--max-duration`, as audit has them; with no background, the figures are exact and
/// nothing is subtracted.
/// Tags are read while the command runs, as during pgcost's own bursts: the fixture's
/// `/tagged` statement carries its route and file:line in every sample. With `--no-tags`
/// nothing is sampled, and only the comment pg_stat_statements kept is left (no share).
#[test]
fn tags_are_sampled_while_the_command_runs() {
    let app = App::start("m_tags");
    let url = app.url("/tagged");
    let script = app.script(
        "load.sh",
        &format!("for i in $(seq 1 40); do curl -sf {url} > /dev/null || exit 9; done"),
    );
    let (code, _, report) = app.measure(&["--requests", "40", "--", &script]);
    assert_eq!(code, 0, "{report:#}");
    assert!(
        report["tags"]["samples"].as_u64().unwrap() > 0,
        "{report:#}"
    );
    let statement = &report["statements"][0];
    assert_eq!(report["statements"].as_array().unwrap().len(), 1);
    assert_eq!(statement["calls_per_request"], 1.0);
    let seen = &statement["tags"]["seen"];
    assert_eq!(seen.as_array().unwrap().len(), 1, "{seen:#}");
    assert_eq!(seen[0]["route"], "/tagged");
    assert_eq!(seen[0]["file"], "app/controllers/items.rb");
    assert_eq!(seen[0]["line"], 12);
    assert_eq!(seen[0]["share"], 1.0);

    let (code, _, report) = app.measure(&["--no-tags", "--requests", "40", "--", &script]);
    assert_eq!(code, 0, "{report:#}");
    assert!(report["tags"]["samples"].is_null(), "{:#}", report["tags"]);
    let seen = &report["statements"][0]["tags"]["seen"];
    assert_eq!(seen[0]["route"], "/tagged", "{seen:#}");
    assert!(seen[0]["share"].is_null(), "{seen:#}");
}

#[test]
fn control_windows_before_and_after_the_command() {
    let app = App::start("m_control");
    let url = app.url("/scan");
    let script = app.script(
        "load.sh",
        &format!("for i in $(seq 1 40); do curl -sf {url} > /dev/null || exit 9; done"),
    );
    let (code, _, report) = app.measure(&["--control", "2s", "--requests", "40", "--", &script]);
    assert_eq!(code, 0, "{:#}", report["invalid_reasons"]);
    assert_exact_scan(&report);
    let background = &report["background"];
    let seconds = background["window_seconds"].as_f64().unwrap();
    println!("measure --control 2s: control windows of {seconds:.2} s in all");
    // The window before (two one-second sub-windows), and the one after, sized to the
    // figures: nothing counted in 2 s is taken as up to 3 events, too uncertain beside 40
    // requests' statements, so it is lengthened until the ± is within 15%.
    assert!(seconds > 4.0, "{background:#}");
    assert_eq!(
        background["subtracted"]["statements"], 0.0,
        "{background:#}"
    );
    let uncertainty = background["uncertainty"]["statements"].as_f64().unwrap();
    assert!(uncertainty <= 0.15, "{background:#}");
}

#[test]
fn ctrl_c_is_forwarded_to_the_command() {
    let app = App::start("m_ctrl_c");
    let (started, stopped) = (app.file("started"), app.file("stopped"));
    let script = app.script(
        "wait.sh",
        &format!(
            "trap 'echo int > {stopped}; kill $!; exit 130' INT\n\
             for i in $(seq 1 5); do curl -sf {url} > /dev/null; done\n\
             touch {started}\nsleep 60 &\nwait",
            stopped = stopped.display(),
            started = started.display(),
            url = app.url("/scan"),
        ),
    );
    let report = app.file("report.json");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_pgcost"))
        .args([
            "measure",
            "--quiet",
            "--format",
            "json",
            "--db",
            &app.db_url,
            "-n",
            "5",
        ])
        .arg("-o")
        .arg(&report)
        .args(["--", &script])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&started, Duration::from_secs(60));
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert_eq!(std::fs::read_to_string(&stopped).unwrap().trim(), "int");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(report["valid"], false);
    assert_eq!(report["load"]["command_exit"], 130);
    support::invalid(&report, "interrupted");
}

fn wait_for(path: &Path, limit: Duration) {
    let start = Instant::now();
    while !path.exists() {
        assert!(start.elapsed() < limit, "{} never appeared", path.display());
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn usage_errors_come_before_anything_is_measured() {
    let db = "postgres://nobody@127.0.0.1:1/none";
    let run = |args: &[&str]| {
        let output = pgcost()
            .args(["measure", "--db", db])
            .args(args)
            .output()
            .unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (code, stderr) = run(&["--", "true"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("needs the number of requests"), "{stderr}");
    assert!(stderr.contains("--count-from locust:"), "{stderr}");

    let (code, stderr) = run(&["-n", "5", "--", "no-such-load-tool-4711", "-x"]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("cannot start the command \"no-such-load-tool-4711\""),
        "{stderr}"
    );
    assert!(stderr.contains("hint:"), "{stderr}");

    let (code, stderr) = run(&["--count-from", "wrk:out.json", "--", "true"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("unknown load tool"), "{stderr}");
}

#[test]
fn quiet_still_prints_the_error() {
    let output = pgcost()
        .args([
            "measure",
            "-q",
            "-n",
            "5",
            "--db",
            "postgres://nobody@127.0.0.1:1/none",
        ])
        .args(["--", "true"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(
        stderr
            .lines()
            .all(|l| l.starts_with("error: ") || l.starts_with("hint: ")),
        "under -q, only the error and its hint: {stderr}"
    );
    assert!(output.stdout.is_empty());
}
