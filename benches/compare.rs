//! Load-driver benchmark (issue: the driver must never be the bottleneck): pgcost against
//! wrk and oha, side by side in one run, on the same loopback server; the targets (c = 8,
//! static) as medians of interleaved rounds, on the in-process fixture and on nginx (one
//! worker, a static 204), which takes no CPU from the tools' process. Also times one statistics snapshot with 5,000
//! pg_stat_statements entries present, and the naming of the changed entries afterwards.
//! `PGCOST_BENCH_SERVE=1` only starts the server and prints its URLs, for profiling by hand.
//!
//! Run with `benches/run.sh` (it installs wrk and nginx, and builds oha into a cache outside
//! the repo).
//! Tools are found on PATH, or through WRK and OHA. N defaults to 50,000
//! (PGCOST_BENCH_N), concurrency 1, 8 and 64; PGCOST_BENCH_TARGETS_ONLY=1 runs only the
//! interleaved c = 8 comparisons.

#[path = "../tests/support/mod.rs"]
mod support;

use std::process::{Command, Stdio};
use std::time::Instant;

use support::TestDb;
use support::fixture::Fixture;

struct Usage {
    stdout: String,
    cpu_seconds: f64,
    max_rss_kib: i64,
}

/// Runs a command to completion and returns its own resource usage (wait4).
// The child is reaped with wait4 rather than Child::wait.
#[allow(clippy::zombie_processes)]
fn measure(cmd: &mut Command) -> Usage {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let pid = child.id() as libc::pid_t;
    let mut stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut text).map(|_| text)
    });
    let mut status = 0;
    // SAFETY: FFI with pointers to locals; the child is ours and not yet reaped.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4");
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Usage {
        stdout: reader.join().unwrap().unwrap_or_default(),
        cpu_seconds: tv(usage.ru_utime) + tv(usage.ru_stime),
        max_rss_kib: usage.ru_maxrss,
    }
}

/// nginx with one worker answering 204 on a free loopback port, stopped on drop.
struct Nginx {
    child: std::process::Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Nginx {
    /// Starts Debian's nginx, or returns None when it is not installed.
    fn start() -> Option<Nginx> {
        let binary = ["/usr/sbin/nginx", "nginx"]
            .into_iter()
            .find(|b| Command::new(b).arg("-v").output().is_ok())?;
        let dir = tempfile::tempdir().ok()?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .ok()?
            .local_addr()
            .ok()?
            .port();
        let d = dir.path().display();
        let conf = format!(
            "worker_processes 1;\nerror_log stderr error;\npid {d}/nginx.pid;\n\
             events {{ worker_connections 1024; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  \
             proxy_temp_path {d}/proxy;\n  fastcgi_temp_path {d}/fastcgi;\n  \
             uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n  \
             server {{ listen 127.0.0.1:{port}; keepalive_requests 100000000; \
             location / {{ return 204; }} }}\n}}\n"
        );
        let path = dir.path().join("nginx.conf");
        std::fs::write(&path, conf).ok()?;
        let child = Command::new(binary)
            .arg("-c")
            .arg(&path)
            .args(["-g", "daemon off;"])
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .ok()?;
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Some(Nginx {
                    child,
                    port,
                    _dir: dir,
                });
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        None
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGTERM: the master stops its worker too (SIGKILL would orphan the worker).
        // SAFETY: signalling our own child, not yet reaped.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        let _ = self.child.wait();
    }
}

struct Row {
    tool: &'static str,
    endpoint: &'static str,
    concurrency: u32,
    requests: f64,
    rps: f64,
    usage: Usage,
    p50_ms: f64,
    p99_ms: f64,
}

fn print_header() {
    println!(
        "{:<7} {:<8} {:>4} {:>9} {:>10} {:>10} {:>9} {:>8} {:>8}",
        "tool", "endpoint", "c", "requests", "req/s", "cpu us/req", "RSS MiB", "p50 ms", "p99 ms"
    );
}

fn print_row(r: &Row) {
    println!(
        "{:<7} {:<8} {:>4} {:>9.0} {:>10.0} {:>10.1} {:>9.1} {:>8.3} {:>8.3}",
        r.tool,
        r.endpoint,
        r.concurrency,
        r.requests,
        r.rps,
        r.usage.cpu_seconds / r.requests * 1e6,
        r.usage.max_rss_kib as f64 / 1024.0,
        r.p50_ms,
        r.p99_ms
    );
}

fn tool(var: &str, name: &str) -> Option<String> {
    if let Ok(path) = std::env::var(var) {
        return Some(path);
    }
    Command::new(name)
        .arg("--version")
        .output()
        .ok()
        .map(|_| name.to_string())
}

fn pgcost(db: &TestDb, url: &str, endpoint: &'static str, n: u64, c: u32) -> Row {
    let usage = measure(Command::new(env!("CARGO_BIN_EXE_pgcost")).args([
        "audit",
        "--db",
        &db.url(),
        "--url",
        url,
        "-n",
        &n.to_string(),
        "-c",
        &c.to_string(),
        "--format",
        "json",
        "--quiet",
        "--no-findings",
    ]));
    let report: serde_json::Value = serde_json::from_str(&usage.stdout).expect("pgcost JSON");
    Row {
        tool: "pgcost",
        endpoint,
        concurrency: c,
        requests: n as f64,
        rps: report["load"]["rps"].as_f64().unwrap_or(0.0),
        p50_ms: report["load"]["latency_ms"]["p50"].as_f64().unwrap_or(0.0),
        p99_ms: report["load"]["latency_ms"]["p99"].as_f64().unwrap_or(0.0),
        usage,
    }
}

/// wrk runs for a duration, not a count: run it long enough for about `n` requests at
/// pgcost's rate, and normalise per request.
fn wrk(path: &str, url: &str, endpoint: &'static str, c: u32, seconds: u64) -> Row {
    wrk_threads(path, url, endpoint, (c.min(2), c), seconds)
}

/// wrk with `threads` threads and `c` connections (issue #26 compares with `wrk -t1 -c8`).
fn wrk_threads(
    path: &str,
    url: &str,
    endpoint: &'static str,
    (threads, c): (u32, u32),
    seconds: u64,
) -> Row {
    let threads = threads.to_string();
    let usage = measure(Command::new(path).args([
        "-t",
        &threads,
        "-c",
        &c.to_string(),
        "-d",
        &format!("{seconds}s"),
        "--latency",
        url,
    ]));
    let text = usage.stdout.clone();
    let number_after = |label: &str| -> Option<f64> {
        text.lines()
            .find(|l| l.trim_start().starts_with(label))
            .and_then(|l| {
                l.trim_start()[label.len()..]
                    .split_whitespace()
                    .next()
                    .map(str::to_string)
            })
            .and_then(|v| parse_wrk_value(&v))
    };
    let requests = text
        .lines()
        .find(|l| l.contains("requests in"))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(0.0);
    Row {
        tool: "wrk",
        endpoint,
        concurrency: c,
        requests,
        rps: number_after("Requests/sec:").unwrap_or(0.0),
        p50_ms: number_after("50%").unwrap_or(0.0),
        p99_ms: number_after("99%").unwrap_or(0.0),
        usage,
    }
}

/// `1.23ms`, `812.00us`, `1.02s` or a bare number, in milliseconds (bare numbers as is).
fn parse_wrk_value(v: &str) -> Option<f64> {
    let (number, scale) = if let Some(n) = v.strip_suffix("us") {
        (n, 0.001)
    } else if let Some(n) = v.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1000.0)
    } else {
        (v, 1.0)
    };
    number.parse::<f64>().ok().map(|n| n * scale)
}

fn oha(path: &str, url: &str, endpoint: &'static str, n: u64, c: u32) -> Row {
    let usage = measure(Command::new(path).args([
        "-n",
        &n.to_string(),
        "-c",
        &c.to_string(),
        "--no-tui",
        "--output-format",
        "json",
        url,
    ]));
    let report: serde_json::Value = serde_json::from_str(&usage.stdout).unwrap_or_default();
    let seconds = |v: &serde_json::Value| v.as_f64().unwrap_or(0.0) * 1000.0;
    Row {
        tool: "oha",
        endpoint,
        concurrency: c,
        requests: n as f64,
        rps: report["summary"]["requestsPerSec"].as_f64().unwrap_or(0.0),
        p50_ms: seconds(&report["latencyPercentiles"]["p50"]),
        p99_ms: seconds(&report["latencyPercentiles"]["p99"]),
        usage,
    }
}

/// Fills pg_stat_statements with distinct statements: k additions in each of m columns.
async fn fill_statements(db: &TestDb, count: usize) {
    let client = db.connect(support::DB).await;
    let mut made = 0;
    'outer: for columns in 1..=100 {
        for additions in 1..=60 {
            let expr = vec!["1"; additions].join("+");
            let sql = format!("SELECT {}", vec![expr.as_str(); columns].join(", "));
            client.simple_query(&sql).await.unwrap();
            made += 1;
            if made >= count {
                break 'outer;
            }
        }
    }
}

struct Tools<'a> {
    wrk: Option<&'a str>,
    oha: Option<&'a str>,
}

/// `rounds` interleaved runs of each tool at c = 8 against `url`, and the medians of
/// requests per second and CPU per request, as ratios to pgcost's.
fn interleaved(db: &TestDb, tools: &Tools, label: &str, url: &str, n: u64, rounds: usize) {
    let mut runs: Vec<(&str, Vec<Row>)> =
        vec![("pgcost", vec![]), ("wrk", vec![]), ("oha", vec![])];
    // A loaded machine flatters the slower tool: say how loaded this one was.
    let load_average = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "\n{label}: load average before the rounds: {}",
        load_average.trim()
    );
    for _ in 0..rounds {
        runs[0].1.push(pgcost(db, url, "static", n, 8));
        // `wrk -t1 -c8 -d4s`, as issue #26 measured it.
        if let Some(w) = tools.wrk {
            runs[1].1.push(wrk_threads(w, url, "static", (1, 8), 4));
        }
        if let Some(o) = tools.oha {
            runs[2].1.push(oha(o, url, "static", n, 8));
        }
    }
    let median = |rows: &[Row], f: &dyn Fn(&Row) -> f64| {
        let mut v: Vec<f64> = rows.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let cpu = |r: &Row| r.usage.cpu_seconds / r.requests * 1e6;
    println!("\n{label}, c = 8, median of {rounds} interleaved rounds:");
    let mut medians = Vec::new();
    for (tool, rows) in &runs {
        if rows.is_empty() {
            continue;
        }
        let (rps, us) = (median(rows, &|r| r.rps), median(rows, &cpu));
        println!("{tool:<7} req/s {rps:>8.0}   cpu us/req {us:>6.1}");
        medians.push((*tool, rps, us));
    }
    if let Some(((_, rps, us), others)) = medians.split_first() {
        for (tool, other_rps, other_us) in others {
            println!(
                "pgcost/{tool}: req/s {:.2}x, cpu us/req {:.2}x",
                rps / other_rps,
                us / other_us
            );
        }
    }
}

fn main() {
    let n: u64 = std::env::var("PGCOST_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50_000);
    let wrk_path = tool("WRK", "wrk");
    let oha_path = tool("OHA", "oha");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let db = TestDb::start().await;
        let app = Fixture::start(&db.url(), 64).await;
        if std::env::var_os("PGCOST_BENCH_SERVE").is_some() {
            // For profiling one tool by hand (docs/benchmarks.md, "Why the burst drives hyper directly").
            println!(
                "db {}\nstatic {}\nscan {}",
                db.url(),
                app.url("/static"),
                app.url("/scan")
            );
            std::future::pending::<()>().await;
        }
        println!("N = {n}; wrk: {wrk_path:?}; oha: {oha_path:?}\n");
        print_header();
        // PGCOST_BENCH_TARGETS_ONLY=1 skips this table, for the c = 8 targets alone.
        let table = std::env::var_os("PGCOST_BENCH_TARGETS_ONLY").is_none();
        for (endpoint, path) in [("static", "/static"), ("scan", "/scan")]
            .into_iter()
            .filter(|_| table)
        {
            let url = app.url(path);
            for c in [1u32, 8, 64] {
                let ours = pgcost(&db, &url, endpoint, n, c);
                print_row(&ours);
                let mut rows = vec![];
                if let Some(w) = &wrk_path {
                    let seconds = ((n as f64 / ours.rps.max(1.0)).ceil() as u64).max(2);
                    rows.push(wrk(w, &url, endpoint, c, seconds));
                }
                if let Some(o) = &oha_path {
                    rows.push(oha(o, &url, endpoint, n, c));
                }
                rows.iter().for_each(print_row);
            }
        }
        // The targets, as ratios: throughput and client CPU at c = 8 on a static endpoint.
        // One run each is noisy on a shared 2-core machine, so the three tools take turns
        // for several rounds, and the medians are compared.
        let rounds: usize = std::env::var("PGCOST_BENCH_ROUNDS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(5);
        let tools = Tools {
            wrk: wrk_path.as_deref(),
            oha: oha_path.as_deref(),
        };
        interleaved(
            &db,
            &tools,
            "fixture /static",
            &app.url("/static"),
            n,
            rounds,
        );
        match Nginx::start() {
            Some(nginx) => interleaved(&db, &tools, "nginx 204", &nginx.url(), n, rounds),
            None => println!("\nnginx is not installed: no nginx comparison"),
        }

        // One snapshot's cost with 5,000 statements present (pg_stat_statements.max).
        fill_statements(&db, 5_000).await;
        let target = pgcost::postgres::conninfo::resolve(Some(&db.url()), &|_: &str| None).unwrap();
        let mut source =
            pgcost::postgres::stats_connection::StatsConnection::open(&target, "postgres")
                .await
                .unwrap();
        let mut times = Vec::new();
        let mut entries = 0;
        for _ in 0..5 {
            let t0 = Instant::now();
            let snapshot = source.snapshot().await.unwrap();
            times.push(t0.elapsed().as_secs_f64() * 1000.0);
            entries = snapshot.statements.len();
        }
        times.sort_by(f64::total_cmp);
        println!(
            "\nsnapshot with {entries} pg_stat_statements entries: median {:.1} ms, max {:.1} ms",
            times[2], times[4]
        );

        // After a window: naming the entries that changed (ten new statements here), the
        // only read of query texts in admin mode.
        let start = source.snapshot().await.unwrap();
        let client = db.connect(support::DB).await;
        for i in 0..10 {
            let columns = vec!["1"; 101 + i].join(", ");
            client
                .simple_query(&format!("SELECT {columns}"))
                .await
                .unwrap();
        }
        let mut end = source.snapshot().await.unwrap();
        let t0 = Instant::now();
        source
            .name_changed(&pgcost_core::snapshot::calls(&start.statements), &mut end)
            .await
            .unwrap();
        let named = end
            .statements
            .values()
            .filter(|s| !s.query.is_empty())
            .count();
        println!(
            "naming the {named} changed entries after the window: {:.1} ms",
            t0.elapsed().as_secs_f64() * 1000.0
        );
    });
}
