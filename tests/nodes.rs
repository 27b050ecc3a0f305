//! Every database a request touches (`--db` repeated): each database's figures and their
//! sum equal what the fixture's two-database endpoint costs by construction; one `--db`
//! names the other database in a warning; bad `--db` input is refused with exit 2. One
//! cluster for the whole file.

mod support;

use pgcost::render::{Exporter, JsonExporter, TableExporter};
use pgcost_core::report::model::notes::Note;
use support::fixture::Fixture;
use support::fixture::nodes::{AUTH_DB, CHECK, DATA};
use support::{
    Cost, ITEMS, SMALL, TestDb, assert_cost, assert_valid, audit, calls_per_request, pgcost,
    run_blocking,
};

const RUN: [&str; 6] = ["-n", "100", "-c", "2", "--warmup", "40"];

/// `app`: the session check once and the data query once (see `fixture/nodes.rs`).
const APP: Cost = Cost {
    transactions: 2.0,
    statements: 2.0,
    rows_read: (SMALL + ITEMS) as f64,
    rows_returned: (1 + ITEMS) as f64,
    rows_written: 0.0,
};
/// `auth`: the session check twice.
const AUTH: Cost = Cost {
    transactions: 2.0,
    statements: 2.0,
    rows_read: (2 * SMALL) as f64,
    rows_returned: 2.0,
    rows_written: 0.0,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_databases_are_measured_apart_and_summed() {
    let db = TestDb::start().await;
    db.create_seeded_database(AUTH_DB).await;
    let app = Fixture::start(&db.url(), 2).await;
    let url = app.url("/nodes/two-databases");
    let auth_url = db.cluster.url(AUTH_DB);

    // Both databases: each one's figures, and their sum.
    let mut args = RUN.to_vec();
    args.extend(["--db", &auth_url]);
    let r = audit(&db, url.clone(), &args).await;
    assert_valid(&r);
    let names: Vec<&str> = r.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["app", AUTH_DB]);
    assert_cost("app", &r.nodes[0].per_request, &APP);
    assert_cost("auth", &r.nodes[1].per_request, &AUTH);
    let sum = Cost {
        transactions: APP.transactions + AUTH.transactions,
        statements: APP.statements + AUTH.statements,
        rows_read: APP.rows_read + AUTH.rows_read,
        rows_returned: APP.rows_returned + AUTH.rows_returned,
        rows_written: 0.0,
    };
    assert_cost("sum", &r.per_request, &sum);
    // The same text in two databases is two statements.
    assert_eq!(calls_per_request(&r, "app", CHECK), 1.0);
    assert_eq!(calls_per_request(&r, AUTH_DB, CHECK), 2.0);
    assert_eq!(calls_per_request(&r, "app", DATA), 1.0);
    assert_eq!(r.statements.len(), 3, "{:?}", r.statements);
    let auth_small = (r.tables.iter())
        .find(|t| t.database.as_deref() == Some(AUTH_DB) && t.table == "public.small")
        .expect("auth's small table");
    assert_eq!(auth_small.seq_scans, 2.0);
    assert_eq!(auth_small.seq_rows_read, (2 * SMALL) as f64);
    assert!(
        !r.notes
            .iter()
            .map(Note::message)
            .any(|w| w.contains("also moved")),
        "{:?}",
        r.notes
    );
    let json: serde_json::Value = serde_json::from_str(&JsonExporter.render(&r)).unwrap();
    let node = &json["nodes"][1];
    assert_eq!(node["name"], AUTH_DB);
    assert_eq!(node["role"], "primary");
    assert_eq!(node["database"], auth_url.as_str());
    assert_eq!(node["per_request"]["transactions"], 2.0);
    let table = TableExporter.render(&r);
    assert!(table.contains("Per database (per request)"), "{table}");

    // One database: valid, and the other one is named in the header with its figures.
    let r = audit(&db, url, &RUN).await;
    assert_valid(&r);
    assert_cost("app alone", &r.per_request, &APP);
    assert!(r.nodes.is_empty());
    let warning = (r.notes.iter().map(Note::message))
        .find(|w| w.contains("also moved"))
        .unwrap_or_else(|| panic!("no warning about auth: {:?}", r.notes));
    assert!(
        warning.starts_with(
            "database \"auth\" also moved during the window (2.0 transactions and 20.0 rows \
             read per request"
        ),
        "{warning}"
    );
    assert!(
        warning.contains("or other traffic on this server"),
        "{warning}"
    );
    assert!(
        warning.ends_with(&format!("add --db {auth_url}")),
        "{warning}"
    );
    let table = TableExporter.render(&r);
    let header = table.split("\nPer request").next().unwrap();
    assert!(header.contains("database \"auth\" also moved"), "{table}");

    check_with_a_budget_per_database(&db, &app);

    // A database that does not exist, named as such; exit 2.
    let missing = db.cluster.url("nope");
    let mut cmd = pgcost();
    cmd.args([
        "audit",
        "--url",
        &app.url("/nodes/two-databases"),
        "--quiet",
    ]);
    cmd.args([
        "--db",
        &db.url(),
        "--db",
        &missing,
        "--warmup",
        "0",
        "-n",
        "1",
        "-c",
        "1",
    ]);
    let out = run_blocking(cmd).code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("\"nope\""), "{stderr}");
    assert!(stderr.contains("does not exist"), "{stderr}");

    // A role that may not read pg_stat_statements for one database: that one is named.
    let admin = db.connect("postgres").await;
    admin
        .batch_execute(
            "CREATE ROLE weak LOGIN; \
             REVOKE EXECUTE ON FUNCTION pg_stat_statements(boolean) FROM PUBLIC",
        )
        .await
        .unwrap();
    let weak = db.cluster.url(AUTH_DB).replace("postgres@", "weak@");
    let mut cmd = pgcost();
    cmd.args([
        "audit",
        "--url",
        &app.url("/nodes/two-databases"),
        "--quiet",
    ]);
    cmd.args([
        "--db",
        &db.url(),
        "--db",
        &weak,
        "--warmup",
        "0",
        "-n",
        "1",
        "-c",
        "1",
    ]);
    let out = run_blocking(cmd).code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("database \"auth\": reading pg_stat_statements failed"),
        "{stderr}"
    );
}

/// `pgcost check` with `[database] urls`: two endpoints on the same route, one within its
/// `auth` budget and one over it (exit 1); the budget of the sum holds in both.
fn check_with_a_budget_per_database(db: &TestDb, app: &Fixture) {
    let dir = tempfile::tempdir().unwrap();
    let endpoint = |name: &str, auth: &str| {
        format!(
            "\n[[endpoint]]\nname = \"{name}\"\npath = \"/nodes/two-databases\"\n\
             [endpoint.budget]\ntransactions = 4\nrows_read = 80\n\
             [endpoint.budget.nodes.auth]\n{auth}\n"
        )
    };
    let text = format!(
        "base_url = \"{}\"\n[database]\nurls = [\"{}\", \"{}\"]\n\
         [defaults]\nrequests = 100\nconcurrency = 2\nwarmup = 40\n{}{}",
        app.url(""),
        db.url(),
        db.cluster.url(AUTH_DB),
        endpoint("within", "transactions = 2\nstatements = 2\nrows_read = 20"),
        endpoint("over", "transactions = 1\nrows_read = 19"),
    );
    let config = dir.path().join("pgcost.toml");
    std::fs::write(&config, text).unwrap();
    let out = dir.path().join("check.json");
    let mut cmd = pgcost();
    cmd.arg("check").arg("--config").arg(&config);
    cmd.args(["--format", "json", "--quiet", "-o"]).arg(&out);
    let assert = run_blocking(cmd);
    let err = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
    assert.code(1);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let endpoints = report["endpoints"].as_array().unwrap();
    for e in endpoints {
        assert_eq!(e["report"]["valid"], true, "{err}: {e:#}");
        assert_eq!(e["report"]["per_request"]["transactions"], 4.0);
        assert_eq!(e["report"]["nodes"][1]["per_request"]["rows_read"], 20.0);
    }
    assert_eq!(endpoints[0]["breaches"], serde_json::json!([]), "{err}");
    let breached: Vec<&str> = (endpoints[1]["breaches"].as_array().unwrap().iter())
        .map(|b| b["metric"].as_str().unwrap())
        .collect();
    assert_eq!(
        breached,
        ["nodes.auth.transactions", "nodes.auth.rows_read"]
    );
}

#[test]
fn the_same_database_twice_is_refused() {
    let mut cmd = pgcost();
    cmd.args(["audit", "--url", "http://127.0.0.1:1/x"]);
    cmd.args([
        "--db",
        "postgres://u@h:5432/app",
        "--db",
        "postgres://u:pw@h/app",
    ]);
    let out = cmd.assert().code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("\"app\" on h:5432 is named twice"),
        "{stderr}"
    );
    assert!(!stderr.contains("pw@"), "{stderr}");
}
