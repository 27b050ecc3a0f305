//! Test support: a throwaway cluster with a seeded database, and a fixture app whose
//! per-request SQL is known by construction; a CPU-bound app, and the stress lane's CPU
//! hogs; how a ramp's verdict is read; a real Django site served by gunicorn, the issue
//! tracker's rows, and the survey fixture (the tracker as a whole web app, its traffic as a
//! log).
#![allow(dead_code)]

pub mod busy_app;
pub mod django;
pub mod fixture;
pub mod github_sarif;
pub mod stress;
pub mod survey_app;
pub mod tracker;
pub mod verdict;

/// Runs the SARIF 2.1.0 schema validator (`tests/support/validate_sarif.py`, Python's
/// jsonschema; `.ci/run` installs it) on `files`: (passed, what it printed).
pub fn validate_sarif(files: &[&std::path::Path]) -> (bool, String) {
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/validate_sarif.py");
    let output = std::process::Command::new("python3")
        .arg(script)
        .args(files)
        .output()
        .expect("python3 runs the SARIF validator");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

use pgcost::postgres::cluster::Cluster;
pub use pgcost_core::report::model::invalid::Code;
use tokio_postgres::NoTls;

/// Rows in `items`, scanned sequentially by the fixture's endpoints.
pub const ITEMS: i64 = 50;
/// Rows in `small`.
pub const SMALL: i64 = 10;
/// Groups the fixture's user belongs to, and grants per group: the user's whole
/// permission set is GROUPS * GRANTS_PER_GROUP rows.
pub const GROUPS: i64 = 5;
pub const GRANTS_PER_GROUP: i64 = 60;
/// The seeded target database.
pub const DB: &str = "app";

/// Rows of `plan_orders` ([`TestDb::seed_plan_orders`]).
pub const PLAN_ORDERS: i64 = 50_000;

/// A cluster with database `app` seeded, and pg_stat_statements in `postgres` and `app`.
pub struct TestDb {
    pub cluster: Cluster,
}

impl TestDb {
    pub async fn start() -> TestDb {
        TestDb::start_with(&[]).await
    }

    /// Starts with extra server settings, e.g. `("pg_stat_statements.max", "100")`.
    pub async fn start_with(settings: &[(&str, &str)]) -> TestDb {
        let settings: Vec<(String, String)> = settings
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let cluster = tokio::task::spawn_blocking(move || {
            let pairs: Vec<(&str, &str)> = settings
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            Cluster::start(&pairs)
        })
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("throwaway cluster: {} ({:?})", e.message, e.hint));
        let db = TestDb { cluster };
        let admin = db.connect("postgres").await;
        admin
            .batch_execute("CREATE EXTENSION pg_stat_statements")
            .await
            .unwrap();
        db.create_seeded_database(DB).await;
        db
    }

    /// Creates database `name` on this cluster with the schema and rows of `app`, and
    /// pg_stat_statements; its counters are its own (`pg_stat_database` by `datid`,
    /// pg_stat_statements by `dbid`), so tests can share the cluster.
    pub async fn create_seeded_database(&self, name: &str) {
        let admin = self.connect("postgres").await;
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .unwrap();
        let app = self.connect(name).await;
        app.batch_execute(&format!(
            "CREATE EXTENSION pg_stat_statements;
             CREATE TABLE items (id int NOT NULL, owner int NOT NULL, name text NOT NULL);
             INSERT INTO items SELECT g, g % 5, 'item ' || g FROM generate_series(1, {ITEMS}) g;
             CREATE TABLE small (id int NOT NULL, label text NOT NULL);
             INSERT INTO small SELECT g, 'label ' || g FROM generate_series(1, {SMALL}) g;
             CREATE TABLE hits (id bigserial, at timestamptz NOT NULL DEFAULT now());
             CREATE TABLE group_members (user_id int NOT NULL, group_id int NOT NULL);
             INSERT INTO group_members SELECT 1, g FROM generate_series(1, {GROUPS}) g;
             CREATE TABLE group_grants (group_id int NOT NULL, action text NOT NULL);
             INSERT INTO group_grants
               SELECT g, 'action.' || a FROM generate_series(1, {GROUPS}) g,
                                              generate_series(1, {GRANTS_PER_GROUP}) a;
             INSERT INTO group_grants VALUES (3, 'projects.read');"
        ))
        .await
        .unwrap();
        app.batch_execute("VACUUM ANALYZE").await.unwrap();
    }

    pub fn url(&self) -> String {
        self.cluster.url(DB)
    }

    /// A streaming hot standby of this cluster on a free loopback port (`pg_basebackup
    /// -R`), with the same settings: it holds everything created so far, and replays the
    /// rest. Needs the multi-threaded runtime.
    pub fn start_standby(&self) -> Cluster {
        tokio::task::block_in_place(|| self.cluster.start_standby(&[]))
            .unwrap_or_else(|e| panic!("standby: {} ({:?})", e.message, e.hint))
    }

    /// `plan_orders`: [`PLAN_ORDERS`] rows, 5 per `customer_ref`, indexed by `id` only, for
    /// the fixture's `/plans/...` endpoints.
    pub async fn seed_plan_orders(&self) {
        let app = self.connect(DB).await;
        app.batch_execute(&format!(
            "CREATE TABLE plan_orders (id int PRIMARY KEY, customer_ref text NOT NULL,
                                       total int NOT NULL, created_at timestamptz NOT NULL);
             INSERT INTO plan_orders
               SELECT g, 'c' || (g % {}), g % 100, '2024-01-01'::timestamptz + g * interval '1 min'
               FROM generate_series(1, {PLAN_ORDERS}) g;",
            PLAN_ORDERS / 5
        ))
        .await
        .unwrap();
        app.batch_execute("VACUUM ANALYZE plan_orders")
            .await
            .unwrap();
    }

    pub async fn connect(&self, dbname: &str) -> tokio_postgres::Client {
        let (client, conn) = tokio_postgres::connect(&self.cluster.url(dbname), NoTls)
            .await
            .unwrap();
        tokio::spawn(async move {
            let _ = conn.await;
        });
        client
    }
}

/// Variables a test's pgcost must not inherit from the caller: database, TLS, credential
/// and CI settings.
pub const CALLER_VARS: &[&str] = &[
    "DATABASE_URL",
    "PGHOST",
    "PGPORT",
    "PGUSER",
    "PGPASSWORD",
    "PGDATABASE",
    "PGSSLMODE",
    "PGSSLROOTCERT",
    "PGCOST_BEARER",
    "PGCOST_BASIC_PASSWORD",
    "GITHUB_STEP_SUMMARY",
];

/// The pgcost binary, with none of [`CALLER_VARS`] inherited from the caller.
pub fn pgcost() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("pgcost").unwrap();
    for var in CALLER_VARS {
        cmd.env_remove(var);
    }
    cmd
}

/// A loopback port with nothing listening on it.
pub fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Runs the binary off the async runtime, which the fixture app needs to keep serving.
pub fn run_blocking(mut cmd: assert_cmd::Command) -> assert_cmd::assert::Assert {
    std::thread::spawn(move || cmd.assert()).join().unwrap()
}

/// The audit configuration of `pgcost audit --url URL --db <this cluster> --quiet EXTRA...`.
pub fn audit_config(db: &TestDb, url: String, extra: &[&str]) -> pgcost::config::AuditConfig {
    audit_config_of(&db.url(), &url, extra)
}

/// The audit configuration of `pgcost audit --url URL --db DB_URL --quiet EXTRA...`.
pub fn audit_config_of(db_url: &str, url: &str, extra: &[&str]) -> pgcost::config::AuditConfig {
    let mut argv = vec!["pgcost", "audit", "--url", url, "--db", db_url, "--quiet"];
    argv.extend(extra);
    let pgcost::flags::Command::Audit(args) =
        <pgcost::flags::Cli as clap::Parser>::parse_from(argv).command
    else {
        unreachable!("argv starts with audit")
    };
    pgcost::config::AuditConfig::from_args(&args, &|_: &str| None).unwrap()
}

/// Audits in process with `pgcost audit --url URL --db <this cluster> --quiet EXTRA...`.
pub async fn audit(db: &TestDb, url: String, extra: &[&str]) -> pgcost_core::report::Report {
    let config = audit_config(db, url, extra);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let report = pgcost::measure::run(&config, &pgcost::progress::Progress::hidden(), stop)
        .await
        .unwrap_or_else(|e| panic!("audit failed: {} ({:?})", e.message, e.hint));
    assert_schema("audit", &serde_json::to_string(&report).unwrap());
    report
}

/// Valid, and every response a 200.
pub fn assert_valid(report: &pgcost_core::report::Report) {
    assert!(report.valid, "invalid: {:?}", report.invalid_reasons);
    assert_eq!(report.load.status.get("200"), Some(&report.load.requests));
}

/// The report's row for `schema.table`.
pub fn table<'a>(
    report: &'a pgcost_core::report::Report,
    name: &str,
) -> &'a pgcost_core::report::TableRow {
    report
        .tables
        .iter()
        .find(|t| t.table == name)
        .unwrap_or_else(|| panic!("no row for {name} in {:?}", report.tables))
}

/// What one request costs one node, or their sum, by construction.
pub struct Cost {
    pub transactions: f64,
    pub statements: f64,
    pub rows_read: f64,
    pub rows_returned: f64,
    pub rows_written: f64,
}

/// `p` is exactly `truth`, with no new connection.
pub fn assert_cost(what: &str, p: &pgcost_core::report::PerRequest, truth: &Cost) {
    assert_eq!(p.transactions, truth.transactions, "{what}: {p:?}");
    assert_eq!(p.statements, Some(truth.statements), "{what}: {p:?}");
    assert_eq!(p.rows_read, truth.rows_read, "{what}: {p:?}");
    assert_eq!(p.rows_returned, Some(truth.rows_returned), "{what}: {p:?}");
    assert_eq!(p.rows_written, truth.rows_written, "{what}: {p:?}");
    assert_eq!(p.new_sessions, Some(0.0), "{what}: {p:?}");
}

/// The calls per request of `query` on the node named `node`, which must have one row.
pub fn calls_per_request(r: &pgcost_core::report::Report, node: &str, query: &str) -> f64 {
    let rows: Vec<_> = (r.statements.iter())
        .filter(|s| s.database.as_deref() == Some(node) && s.query == query)
        .collect();
    assert_eq!(rows.len(), 1, "{node}: {query}: {:?}", r.statements);
    rows[0].calls_per_request
}

/// The entry of a JSON report's `notes[]` whose `code` is `code`, after checking that its
/// `message` is the entry of `warnings` at the same position (the key kept for
/// compatibility). Panics, showing the notes, when there is none.
pub fn note<'a>(report: &'a serde_json::Value, code: &str) -> &'a serde_json::Value {
    let notes = (report["notes"].as_array()).unwrap_or_else(|| panic!("no notes[] in {report}"));
    let at = (notes.iter())
        .position(|n| n["code"] == code)
        .unwrap_or_else(|| panic!("no note {code} in {}", report["notes"]));
    assert_eq!(notes.len(), report["warnings"].as_array().unwrap().len());
    assert_eq!(notes[at]["message"], report["warnings"][at]);
    &notes[at]
}

/// The message of the entry of a JSON report's `invalid_reasons[]` whose `code` is
/// `code`. Panics, showing the reasons, when there is none.
pub fn invalid<'a>(report: &'a serde_json::Value, code: &str) -> &'a str {
    let reasons = report["invalid_reasons"].as_array();
    let reasons = reasons.unwrap_or_else(|| panic!("no invalid_reasons[] in {report}"));
    let reason = (reasons.iter()).find(|r| r["code"] == code);
    let reason = reason.unwrap_or_else(|| panic!("no reason {code} in {reasons:?}"));
    reason["message"].as_str().unwrap()
}

/// The message of the reason of `report` whose code is `code`; panics, showing the
/// reasons, when there is none.
pub fn reason(report: &pgcost_core::report::Report, code: Code) -> &str {
    let reason = (report.invalid_reasons.iter()).find(|r| r.code == code);
    let reason = reason.unwrap_or_else(|| panic!("no {code:?} in {:?}", report.invalid_reasons));
    &reason.message
}

/// Validates a JSON document pgcost wrote against its checked-in schema
/// (`docs/schema/NAME.schema.json`, `tests/json_schema.rs` keeps them current); panics with
/// each error and where it is.
pub fn assert_schema(name: &str, document: &str) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schema");
    let schema = std::fs::read_to_string(dir.join(format!("{name}.schema.json"))).unwrap();
    let schema: serde_json::Value = serde_json::from_str(&schema).unwrap();
    let value: serde_json::Value = serde_json::from_str(document)
        .unwrap_or_else(|e| panic!("{name} document is no JSON ({e}): {document}"));
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = (validator.iter_errors(&value))
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{name} document does not match docs/schema/{name}.schema.json:\n{}",
        errors.join("\n")
    );
}
