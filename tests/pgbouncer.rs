//! PgBouncer (Debian's 1.18, /usr/sbin/pgbouncer) in transaction mode in front of the test
//! cluster, with the fixture app connected through it and `--pgbouncer` on its admin
//! console: the per-request figures stay exact, PgBouncer's own counts match them, its
//! `SET application_name` hand-offs are found and left out, a `--db` that points at
//! PgBouncer is refused (exit 2), and `ramp --pgbouncer` names the pool wall.

mod support;

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pgcost_core::report::Report;
use pgcost_core::report::model::notes::Note;
use support::fixture::Fixture;
use support::{ITEMS, TestDb, audit_config, pgcost, run_blocking, verdict};

const PGBOUNCER: &str = "/usr/sbin/pgbouncer";

/// A PgBouncer started for one test; killed when dropped.
struct Bouncer {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Bouncer {
    /// PgBouncer on a free loopback port, in front of the cluster's `app` database, with
    /// `pool_size` server connections, run as the `postgres` user when we are root.
    fn start(db: &TestDb, pool_size: u32) -> Bouncer {
        let dir = tempfile::tempdir().unwrap();
        let port = support::closed_port();
        let ini = dir.path().join("pgbouncer.ini");
        let users = dir.path().join("users.txt");
        std::fs::write(&users, "\"postgres\" \"\"\n\"pgbouncer\" \"\"\n").unwrap();
        std::fs::write(
            &ini,
            format!(
                "[databases]\n\
                 app = host=127.0.0.1 port={pg} dbname=app user=postgres\n\
                 [pgbouncer]\n\
                 listen_addr = 127.0.0.1\n\
                 listen_port = {port}\n\
                 unix_socket_dir =\n\
                 auth_type = trust\n\
                 auth_file = {users}\n\
                 admin_users = pgbouncer\n\
                 pool_mode = transaction\n\
                 default_pool_size = {pool_size}\n\
                 max_client_conn = 200\n",
                pg = db.cluster.port,
                users = users.display()
            ),
        )
        .unwrap();
        let log = std::fs::File::create(dir.path().join("pgbouncer.log")).unwrap();
        let mut command = Command::new(PGBOUNCER);
        command.arg(&ini).stdout(Stdio::null()).stderr(log);
        // PgBouncer refuses to run as root.
        if nix::unistd::geteuid().is_root() {
            let user = nix::unistd::User::from_name("postgres").unwrap().unwrap();
            for path in [dir.path(), &ini, &users] {
                std::os::unix::fs::chown(path, Some(user.uid.as_raw()), Some(user.gid.as_raw()))
                    .unwrap();
            }
            command.uid(user.uid.as_raw()).gid(user.gid.as_raw());
        }
        let child = command.spawn().expect("start /usr/sbin/pgbouncer");
        let bouncer = Bouncer { child, port, dir };
        bouncer.wait_listening();
        bouncer
    }

    fn wait_listening(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            let log = std::fs::read_to_string(self.dir.path().join("pgbouncer.log"));
            assert!(
                Instant::now() < deadline,
                "PgBouncer did not start: {log:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The app database through PgBouncer.
    fn app_url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/app", self.port)
    }

    /// The admin console.
    fn admin_url(&self) -> String {
        format!("postgres://pgbouncer@127.0.0.1:{}/pgbouncer", self.port)
    }
}

impl Drop for Bouncer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The report's PgBouncer figures, which must be there.
fn figures(report: &Report) -> &pgcost_core::pgbouncer::PgBouncerFigures {
    report.pgbouncer.as_ref().expect("a pgbouncer section")
}

/// Postgres's figures per request, exact: `statements` statements (each a transaction)
/// scanning every row of `items`.
fn assert_exact(report: &Report, statements: f64) {
    assert!(report.valid, "invalid: {:?}", report.invalid_reasons);
    let p = &report.per_request;
    assert_eq!(p.transactions, statements, "{:?}", report.notes);
    assert_eq!(p.statements, Some(statements), "{:?}", report.statements);
    assert_eq!(p.rows_returned, Some(statements * ITEMS as f64));
    assert_eq!(p.rows_read, statements * ITEMS as f64);
    assert_eq!(p.rows_written, 0.0);
    // PgBouncer saw the same transactions and queries (it counts a simple query as one).
    let b = figures(report);
    assert_eq!(b.database, "app");
    assert_eq!(b.transactions_per_request, statements);
    assert_eq!(b.queries_per_request, statements);
}

/// Two endpoints through a PgBouncer of one server connection, in one sequence of shared
/// settle waits; then the refusal of a --db that points at PgBouncer.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn figures_through_pgbouncer_are_exact_and_its_own_statements_are_left_out() {
    let db = TestDb::start().await;
    let bouncer = Bouncer::start(&db, 1);
    // Four app connections share one server connection: at most three clients wait.
    let named = format!("{}?application_name=pgcost-fixture", bouncer.app_url());
    let app = Fixture::start(&named, 4).await;
    let admin = bouncer.admin_url();
    let flags = ["--pgbouncer", admin.as_str(), "-n", "200", "--no-plans"];
    let configs = [
        audit_config(&db, app.url("/bouncer/read"), &flags),
        audit_config(&db, app.url("/bouncer/alternate"), &flags),
    ];
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let hidden = pgcost::progress::Progress::hidden();
    let reports = pgcost::measure::run_sequence(&configs, &hidden, stop, |_| {})
        .await
        .unwrap_or_else(|e| panic!("{} ({:?})", e.message, e.hint));

    let read = &reports[0];
    support::assert_valid(read);
    assert_exact(read, 1.0);
    let b = figures(read);
    assert_eq!(b.own_statements, 0, "{:?}", read.notes);
    // The peak is sampled (every 20 ms and at the boundaries), and a request of this route
    // holds the connection for well under a millisecond: a sample may find no one waiting.
    // PgBouncer's own wait total counts every queued client, so it is the proof of waiting.
    assert!((0..=3).contains(&b.max_cl_waiting), "{b:?}");
    assert!(b.wait_ms_per_request > 0.0, "{b:?}");

    // Each hand-out of the server connection between the two pools' clients costs a SET
    // application_name that the app never sent: left out, and said.
    let alternate = &reports[1];
    support::assert_valid(alternate);
    assert_exact(alternate, 2.0);
    let b = figures(alternate);
    assert!(b.own_statements > 0, "{:?}", alternate.notes);
    assert!((1..=7).contains(&b.max_cl_waiting), "{b:?}");
    let said = format!("{} SET application_name", b.own_statements);
    assert!(
        (alternate.notes.iter().map(Note::message))
            .any(|w| w.contains("PgBouncer's own statements") && w.contains(&said)),
        "{:?}",
        alternate.notes
    );
    assert!(
        alternate
            .statements
            .iter()
            .all(|s| !s.query.starts_with("SET "))
    );
    let table = pgcost::render::TableExporter;
    let shown = pgcost::render::Exporter::render(&table, alternate);
    assert!(shown.contains("PgBouncer (app)"), "{shown}");
    println!("{shown}");

    // --db through PgBouncer: refused before anything is measured.
    let mut cmd = pgcost();
    cmd.args(["audit", "--url", &app.url("/bouncer/read"), "--quiet"])
        .args(["--db", &bouncer.app_url()]);
    let out = run_blocking(cmd).get_output().clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("through PgBouncer"), "{stderr}");
    assert!(stderr.contains("--pgbouncer"), "{stderr}");

    // --pgbouncer pointing at Postgres itself: not an admin console.
    let mut cmd = pgcost();
    cmd.args(["audit", "--url", &app.url("/bouncer/read"), "--quiet"])
        .args(["--db", &db.url(), "--pgbouncer", &db.url()]);
    let out = run_blocking(cmd).get_output().clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("is not PgBouncer's admin console"),
        "{stderr}"
    );
}

/// `measure --pgbouncer` around a sequential curl loop of `/bouncer/read`, after a
/// warm-up outside it that opens PgBouncer's server connection.
async fn measure_through(db: &TestDb, bouncer: &Bouncer, app: &Fixture) {
    let loop_of = |n: u32| {
        format!(
            "for i in $(seq 1 {n}); do curl -sf {} > /dev/null || exit 9; done",
            app.url("/bouncer/read")
        )
    };
    let warm = loop_of(5);
    let warmed = tokio::task::spawn_blocking(move || {
        Command::new("sh").args(["-c", &warm]).status().unwrap()
    });
    assert!(warmed.await.unwrap().success());
    // One client at a time never waits, and the figures are exact on both sides.
    let load = loop_of(40);
    let mut cmd = pgcost();
    cmd.args(["measure", "--db", &db.url(), "--quiet", "--format", "json"])
        .args(["--pgbouncer", &bouncer.admin_url(), "--requests", "40"])
        .args(["--", "sh", "-c", &load]);
    let out = run_blocking(cmd).get_output().clone();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let report: Report = serde_json::from_str(&stdout).unwrap();
    assert_exact(&report, 1.0);
    assert_eq!(figures(&report).max_cl_waiting, 0, "{stdout}");
}

/// A pool of one server connection, each request holding it for 5 ms: from c=1 to c=16,
/// PgBouncer's wait per request rises while db time stays flat, which is the pool wall.
/// Before it, `measure --pgbouncer` around a curl loop.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn measure_is_exact_and_ramp_names_pgbouncer_s_pool_the_wall() {
    let db = TestDb::start().await;
    let bouncer = Bouncer::start(&db, 1);
    let app = Fixture::start(&bouncer.app_url(), 8).await;
    // First, while pg_sleep's transactions (which touch no table, so wait unpublished in
    // the server connection until one that does) cannot spill into its window.
    measure_through(&db, &bouncer, &app).await;
    // A busy machine may leave the verdict undecided: then it ramps again.
    let (report, stdout) = verdict::until_named("pool", || {
        let mut cmd = pgcost();
        cmd.args(["ramp", "--url", &app.url("/bouncer/sleep"), "--quiet"])
            .args(["--db", &db.url(), "--pgbouncer", &bouncer.admin_url()])
            .args(["--format", "json", "--warmup", "20"])
            // 5 s a step: the verdict judges each change against the spread of the
            // steps' one-second samples, which a step under 5 s does not have.
            .args(["--steps", "1,4,16", "--step-duration", "5s"]);
        let out = run_blocking(cmd).get_output().clone();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(out.status.code(), Some(0), "{stdout}");
        support::assert_schema("ramp", &stdout);
        let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        (report, stdout)
    });
    let steps = report["steps"].as_array().unwrap();
    let wait = |i: usize| {
        steps[i]["pgbouncer"]["wait_ms_per_request"]
            .as_f64()
            .unwrap()
    };
    // Alone, the one client never waits; four clients queue behind one connection.
    assert_eq!(steps[0]["pgbouncer"]["max_cl_waiting"], 0, "{stdout}");
    let waiting = steps[1]["pgbouncer"]["max_cl_waiting"].as_i64().unwrap();
    assert!((1..=3).contains(&waiting), "{stdout}");
    assert!(wait(1) > wait(0) + 0.5, "{stdout}");
    let evidence = report["verdict"]["evidence"].to_string();
    assert!(
        evidence.contains("PgBouncer's clients queued"),
        "{evidence}"
    );
    // The table view gains PgBouncer's column.
    let parsed: pgcost_core::ramp::RampReport = serde_json::from_str(&stdout).unwrap();
    let table =
        pgcost::render::View::render(&parsed, pgcost::render::format::Format::Table).unwrap();
    assert!(table.contains("pgbouncer wait ms / waiting"), "{table}");
    println!("{table}");
}
