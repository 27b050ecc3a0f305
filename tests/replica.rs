//! Read replicas (`--replica`): a real streaming standby of the test cluster, made with
//! `pg_basebackup -R`, serves the fixture app's reads while its primary takes the writes.
//! Each node's figures and their sum equal the truth by construction, with the standby's
//! replay paused (a lag past `--settle-timeout`, named); a burst that moved no measured
//! counter is named, and so is a `--replica` that is a primary; `pgcost measure` takes
//! `--replica` too. One primary and one standby for the whole file.

mod support;

use pgcost::render::{Exporter, JsonExporter, TableExporter};
use pgcost_core::report::Report;
use pgcost_core::report::model::notes::Note;
use support::fixture::Fixture;
use support::fixture::replica::{LIST, LOOKUP, SCHEMA, WRITE, read_from};
use support::{Cost, ITEMS, SMALL, TestDb, assert_cost, assert_valid, audit, calls_per_request};

const RUN: [&str; 6] = ["-n", "100", "-c", "2", "--warmup", "40"];

/// The primary: the write alone (pg_stat_statements counts its one row); see
/// `fixture/replica.rs`.
const PRIMARY: Cost = Cost {
    transactions: 1.0,
    statements: 1.0,
    rows_read: 0.0,
    rows_returned: 1.0,
    rows_written: 1.0,
};
/// The standby: the two reads.
const STANDBY: Cost = Cost {
    transactions: 2.0,
    statements: 2.0,
    rows_read: (ITEMS + SMALL) as f64,
    rows_returned: (ITEMS + 1) as f64,
    rows_written: 0.0,
};

/// Commits on the primary, waits until the standby at `standby_url` has replayed it, then
/// pauses the standby's replay: WAL still arrives, and waits there. The commit's end is the
/// insert position (with `synchronous_commit = off`, the write position lags behind it).
async fn pause_replay_after_a_commit(db: &TestDb, standby_url: &str) {
    let primary = db.connect(support::DB).await;
    primary.execute(WRITE, &[&0i32]).await.unwrap();
    let row = primary
        .query_one("SELECT pg_current_wal_insert_lsn()::text", &[])
        .await
        .unwrap();
    let lsn: String = row.get(0);
    let (standby, conn) = tokio_postgres::connect(standby_url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let caught_up = format!("SELECT pg_last_wal_replay_lsn() >= '{lsn}'::pg_lsn");
    for _ in 0..200 {
        if standby.query_one(&caught_up, &[]).await.unwrap().get(0) {
            standby
                .execute("SELECT pg_wal_replay_pause()", &[])
                .await
                .unwrap();
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the standby did not replay {lsn} within 10 s");
}

fn warning(r: &Report, part: &str) -> Option<String> {
    r.notes.iter().map(Note::message).find(|w| w.contains(part))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_on_a_standby_and_writes_on_its_primary_are_measured_apart_and_summed() {
    let db = TestDb::start().await;
    db.connect(support::DB)
        .await
        .batch_execute(SCHEMA)
        .await
        .unwrap();
    let quiet = "quiet";
    (db.connect("postgres").await)
        .batch_execute(&format!("CREATE DATABASE {quiet}"))
        .await
        .unwrap();
    let standby = db.start_standby();
    let standby_url = standby.url(support::DB);
    let app = Fixture::start(&db.url(), 2).await;
    read_from(&db.url(), &standby_url, 2);
    pause_replay_after_a_commit(&db, &standby_url).await;

    // Both nodes: each one's figures, and their sum. The standby replays nothing meanwhile,
    // which makes its data old but leaves its counters whole.
    let mut args = RUN.to_vec();
    args.extend(["--replica", &standby_url, "--settle-timeout", "15s"]);
    let r = audit(&db, app.url("/replica/read-write"), &args).await;
    assert_valid(&r);
    let replica = format!("app@127.0.0.1:{}", standby.port);
    let names: Vec<(&str, &str)> = (r.nodes.iter())
        .map(|n| (n.name.as_str(), n.role.as_str()))
        .collect();
    assert_eq!(names, [("app", "primary"), (replica.as_str(), "replica")]);
    assert_cost("primary", &r.nodes[0].per_request, &PRIMARY);
    assert_cost("standby", &r.nodes[1].per_request, &STANDBY);
    let sum = Cost {
        transactions: 3.0,
        statements: 3.0,
        rows_read: STANDBY.rows_read,
        rows_returned: PRIMARY.rows_returned + STANDBY.rows_returned,
        rows_written: 1.0,
    };
    assert_cost("sum", &r.per_request, &sum);
    assert_eq!(calls_per_request(&r, "app", WRITE), 1.0);
    assert_eq!(calls_per_request(&r, &replica, LIST), 1.0);
    assert_eq!(calls_per_request(&r, &replica, LOOKUP), 1.0);
    assert_eq!(r.statements.len(), 3, "{:?}", r.statements);
    let items = (r.tables.iter())
        .find(|t| t.database.as_deref() == Some(replica.as_str()) && t.table == "public.items")
        .expect("the standby's items table");
    assert_eq!((items.seq_scans, items.seq_rows_read), (1.0, ITEMS as f64));
    for quiet_line in ["not in recovery", "no counter", "while the app was idle"] {
        assert!(warning(&r, quiet_line).is_none(), "{:?}", r.notes);
    }
    // Paused since before the warm-up: the last replayed commit is older than the two
    // settle waits (over 21 s), past the 15 s settle timeout.
    let lag = format!("replica {replica} replayed the primary's changes ");
    let lag = warning(&r, &lag).unwrap_or_else(|| panic!("no lag line: {:?}", r.notes));
    assert!(lag.contains("late at the end of the window (more than --settle-timeout, 15 s)"));
    let json: serde_json::Value = serde_json::from_str(&JsonExporter.render(&r)).unwrap();
    let node = &json["nodes"][1];
    assert_eq!(node["role"], "replica");
    assert_eq!(node["database"], standby_url.as_str());
    assert_eq!(node["per_request"]["rows_read"], (ITEMS + SMALL) as f64);
    let table = TableExporter.render(&r);
    assert!(table.contains(&format!("{replica} (replica)")), "{table}");

    // Reads on the standby only, measured on the primary alone, with a `--replica` that
    // is the primary's other database: nothing moved, and both are said.
    let not_a_standby = db.cluster.url(quiet);
    let mut args = RUN.to_vec();
    args.extend(["--replica", &not_a_standby]);
    let r = audit(&db, app.url("/replica/read-only"), &args).await;
    assert_valid(&r);
    assert_eq!(r.per_request.transactions, 0.0, "{:?}", r.per_request);
    assert_eq!(r.per_request.statements, Some(0.0), "{:?}", r.per_request);
    let moved = warning(&r, "no counter of the measured database moved")
        .unwrap_or_else(|| panic!("no moved-nothing line: {:?}", r.notes));
    assert!(
        moved.contains("(0 transactions, 0 statements, 0 rows in 100 requests)"),
        "{moved}"
    );
    assert!(moved.contains("--replica URL"), "{moved}");
    let table = TableExporter.render(&r);
    let header = table.split("\nPer request").next().unwrap();
    assert!(
        header.contains("warning    every request succeeded"),
        "{table}"
    );
    let primary = format!(
        "--replica {quiet}@127.0.0.1:{} is not in recovery",
        db.cluster.port
    );
    assert!(warning(&r, &primary).is_some(), "{:?}", r.notes);

    measure_with_the_replica(&db, &standby_url, &app.url("/replica/read-write"));
}

/// `pgcost measure` around a curl loop (40 requests) takes `--replica` as `audit` does.
fn measure_with_the_replica(db: &TestDb, standby_url: &str, url: &str) {
    let load = format!("for i in $(seq 1 40); do curl -sf {url} > /dev/null || exit 9; done");
    let mut cmd = support::pgcost();
    cmd.args(["measure", "--db", &db.url(), "--replica", standby_url]);
    cmd.args([
        "--requests",
        "40",
        "--format",
        "json",
        "--quiet",
        "--",
        "sh",
        "-c",
        &load,
    ]);
    let out = support::run_blocking(cmd).code(0);
    let report: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let nodes = report["nodes"].as_array().unwrap();
    let roles: Vec<&str> = nodes.iter().map(|n| n["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["primary", "replica"]);
    let figures = |node: &serde_json::Value| {
        let p = &node["per_request"];
        (
            p["transactions"].as_f64(),
            p["statements"].as_f64(),
            p["rows_read"].as_f64(),
        )
    };
    let standby_reads = Some((ITEMS + SMALL) as f64);
    assert_eq!(figures(&nodes[0]), (Some(1.0), Some(1.0), Some(0.0)));
    assert_eq!(figures(&nodes[1]), (Some(2.0), Some(2.0), standby_reads));
    assert_eq!(figures(&report), (Some(3.0), Some(3.0), standby_reads));
}
