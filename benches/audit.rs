//! Benchmark (not a timed test): audits the fixture app and prints the load driver's own
//! cost. Run with `cargo bench --bench audit`.
//!
//! Prints requests per second, client CPU seconds per 1,000 requests, peak RSS of the
//! pgcost process, and settle seconds, for N=10,000 at C=16 on a database endpoint, and
//! peak RSS for N=1,000,000 on an endpoint without database work, and the settle time after
//! a burst whose app connections are all gone (one connection per request).
//!
//! Then the cost of reading tags: interleaved rounds of the same audit of a tagged endpoint
//! with tag sampling on (the default) and off (`--no-tags`), side by side, with the median
//! requests per second of each (PGCOST_BENCH_TAG_ROUNDS rounds, 5 by default, of
//! PGCOST_BENCH_TAG_N requests, 50,000 by default; PGCOST_BENCH_TAGS_ONLY=1 runs only these).
//!
//! Then the driver's pace with per-request values: interleaved rounds of a POST to an
//! endpoint without database work, with a fixed body and with a templated one (`{{run}}`,
//! `{{seq}}`, `{{uuid}}`, `{{now}}`), and the median requests per second of each (the same
//! rounds and N; PGCOST_BENCH_TEMPLATES_ONLY=1 runs only these).

#[path = "../tests/support/mod.rs"]
mod support;

use std::process::{Command, Stdio};

use support::TestDb;
use support::fixture::Fixture;

struct Run {
    report: serde_json::Value,
    cpu_seconds: f64,
    max_rss_kib: i64,
}

// The child is reaped with wait4, which also returns its own resource usage.
#[allow(clippy::zombie_processes)]
fn run_pgcost(args: &[String]) -> Run {
    let child = Command::new(env!("CARGO_BIN_EXE_pgcost"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn pgcost");
    let pid = child.id() as libc::pid_t;
    let stdout = child.stdout.expect("stdout");
    let reader =
        std::thread::spawn(move || serde_json::from_reader::<_, serde_json::Value>(stdout));
    let mut status = 0;
    // SAFETY: plain FFI call with valid pointers to locals; the child is ours and unwaited.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4 failed");
    let report = reader.join().unwrap().expect("pgcost printed JSON");
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Run {
        report,
        cpu_seconds: tv(usage.ru_utime) + tv(usage.ru_stime),
        max_rss_kib: usage.ru_maxrss,
    }
}

fn args(db: &TestDb, url: String, n: u64, c: u32) -> Vec<String> {
    vec![
        "audit".into(),
        "--db".into(),
        db.url(),
        "--url".into(),
        url,
        "-n".into(),
        n.to_string(),
        "-c".into(),
        c.to_string(),
        "--format".into(),
        "json".into(),
        "--quiet".into(),
    ]
}

fn print(label: &str, n: u64, run: &Run) {
    let r = &run.report;
    println!(
        "{label:<28} {n:>9} {:>10.0} {:>14.3} {:>12.1} {:>8.1} {:>8.1} {:>6}",
        r["load"]["rps"].as_f64().unwrap_or(0.0),
        run.cpu_seconds / n as f64 * 1000.0,
        run.max_rss_kib as f64 / 1024.0,
        r["settle"]["before_seconds"].as_f64().unwrap_or(0.0),
        r["settle"]["after_seconds"].as_f64().unwrap_or(0.0),
        r["valid"],
    );
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let db = TestDb::start().await;
        let app = Fixture::start(&db.url(), 16).await;
        let only = |name: &str| std::env::var_os(name).is_some();
        let (tags, templates) = (
            only("PGCOST_BENCH_TAGS_ONLY"),
            only("PGCOST_BENCH_TEMPLATES_ONLY"),
        );
        if !tags && !templates {
            driver_runs(&db, &app).await;
        }
        if !templates {
            tag_sampling(&db, &app).await;
        }
        if !tags {
            templated_bodies(&db, &app).await;
        }
    });
}

fn header() {
    println!(
        "{:<28} {:>9} {:>10} {:>14} {:>12} {:>8} {:>8} {:>6}",
        "endpoint",
        "requests",
        "req/s",
        "cpu s/1k req",
        "peak RSS MiB",
        "settle<",
        "settle>",
        "valid"
    );
}

async fn run_blocking(a: Vec<String>) -> Run {
    tokio::task::spawn_blocking(move || run_pgcost(&a))
        .await
        .unwrap()
}

async fn driver_runs(db: &TestDb, app: &Fixture) {
    header();
    let db_run = run_blocking(args(db, app.url("/scan"), 10_000, 16)).await;
    print("/scan (1 query, 50 rows)", 10_000, &db_run);
    let big = std::env::var("PGCOST_BENCH_BIG_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000u64);
    let static_run = run_blocking(args(db, app.url("/static"), big, 16)).await;
    print("/static (no database)", big, &static_run);
    // Each request opens and closes its own connection: once the burst ends, the app
    // has no connection left, and the settle wait should end within a second.
    let fresh_run = run_blocking(args(db, app.url("/fresh"), 2_000, 8)).await;
    print("/fresh (conn. per request)", 2_000, &fresh_run);
}

/// The same audit of `/tagged` with and without tag sampling, in alternating rounds (the
/// order flips each round), and the median req/s and CPU of each.
async fn tag_sampling(db: &TestDb, app: &Fixture) {
    let (rounds, n) = rounds_and_n();
    println!("\ntag sampling, side by side: /tagged, N = {n}, C = 16, {rounds} rounds each");
    header();
    let mut on = Vec::new();
    let mut off = Vec::new();
    for round in 0..rounds {
        for sampled in [round % 2 == 0, round % 2 == 1] {
            let mut a = args(db, app.url("/tagged"), n, 16);
            if !sampled {
                a.push("--no-tags".into());
            }
            let run = run_blocking(a).await;
            let label = if sampled {
                "/tagged, tags sampled"
            } else {
                "/tagged, --no-tags"
            };
            print(label, n, &run);
            let rps = run.report["load"]["rps"].as_f64().unwrap_or(0.0);
            let cpu = run.cpu_seconds / n as f64 * 1000.0;
            if sampled {
                let samples = &run.report["tags"]["samples"];
                println!("{:<28} samples of pg_stat_activity: {samples}", "");
                on.push((rps, cpu));
            } else {
                off.push((rps, cpu));
            }
        }
    }
    let (on_rps, on_cpu) = (
        median(on.iter().map(|r| r.0)),
        median(on.iter().map(|r| r.1)),
    );
    let (off_rps, off_cpu) = (
        median(off.iter().map(|r| r.0)),
        median(off.iter().map(|r| r.1)),
    );
    println!(
        "median req/s: sampled {on_rps:.0}, --no-tags {off_rps:.0} ({:+.1}%); \
         cpu s/1k req: sampled {on_cpu:.3}, --no-tags {off_cpu:.3}",
        (on_rps / off_rps - 1.0) * 100.0
    );
}

/// The same POST burst with a fixed body and with a templated one, in alternating rounds,
/// and the median req/s and CPU of each.
async fn templated_bodies(db: &TestDb, app: &Fixture) {
    let (rounds, n) = rounds_and_n();
    println!(
        "\nper-request values, side by side: POST /static, N = {n}, C = 16, {rounds} rounds each"
    );
    header();
    let fixed = r#"{"slug": "a-1234abcd-1000", "id": "0b3a3c8e-4c1f-4a57-9f0e-6c1d2b3a4f5e", "at": "2026-12-08T01:00:00Z"}"#;
    let templated = r#"{"slug": "a-{{run}}-{{seq}}", "id": "{{uuid}}", "at": "{{now}}"}"#;
    let mut runs = [Vec::new(), Vec::new()];
    for round in 0..rounds {
        for which in [round % 2, 1 - round % 2] {
            let mut a = args(db, app.url("/static"), n, 16);
            let body = [fixed, templated][which];
            a.extend(["-X", "POST", "--allow-writes", "--body", body].map(String::from));
            let run = run_blocking(a).await;
            print(
                ["/static, fixed body", "/static, templated body"][which],
                n,
                &run,
            );
            let rps = run.report["load"]["rps"].as_f64().unwrap_or(0.0);
            runs[which].push((rps, run.cpu_seconds / n as f64 * 1000.0));
        }
    }
    let rps = |i: usize| median(runs[i].iter().map(|r| r.0));
    // CPU microseconds per request: the cost of rendering, which req/s blurs on a busy box.
    let cpu = |i: usize| median(runs[i].iter().map(|r| r.1 * 1000.0));
    println!(
        "median req/s: fixed {:.0}, templated {:.0} ({:+.1}%); cpu µs/req: fixed {:.2}, \
         templated {:.2}",
        rps(0),
        rps(1),
        (rps(1) / rps(0) - 1.0) * 100.0,
        cpu(0),
        cpu(1)
    );
}

/// PGCOST_BENCH_TAG_ROUNDS (5) and PGCOST_BENCH_TAG_N (50,000).
fn rounds_and_n() -> (usize, u64) {
    let rounds = std::env::var("PGCOST_BENCH_TAG_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let n = std::env::var("PGCOST_BENCH_TAG_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50_000);
    (rounds, n)
}

fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.collect();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}
